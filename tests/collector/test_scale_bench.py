"""The collection benchmark, run as a user runs it, on a tiny cluster: tf-collect collects it
completely (exit 0) and the serial kubectl script runs, so the bench measures (speed is not
asserted here; `python bench/collect_scale.py` measures it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "collect_scale.py"


def test_the_bench_measures_a_tiny_cluster() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--nodes", "2", "--gpus-per-node", "2", "--pods", "6",
         "--latency", "0.001"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "cluster: 2 GPU nodes, 4 GPUs, 6 workload pods, 1 ms API latency" in out
    assert re.search(r"^tf-collect: [\d.]+ s, \d+ API requests", out, re.M), out
    assert re.search(r"^serial kubectl script: [\d.]+ s for 14 kubectl commands$", out, re.M), out
    assert re.search(r"^tf-collect peak RSS: \d+ MB", out, re.M), out
