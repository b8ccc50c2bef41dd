"""The scale benchmark's cluster on a small size: its pods are as individual as a real
cluster's (a bench whose clones share everything would measure sharing, not analysis), and
the bench itself, run as a user runs it at a tiny size, measures and tf-analyze finds the
planted faults in its bundle (speed is not asserted here; `python bench/analyze_scale.py`
measures it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import analyze_scale as bench

BENCH = Path(bench.__file__)


def test_cloned_pods_are_individual() -> None:
    data = bench.generate(120, 6, 8, list(bench.DEFAULT_FAULTS))
    clones = [p for p in data.objects[("", "pods")] if p["metadata"]["name"].startswith("train-")]
    assert len(clones) >= 40

    def each(field: Any) -> set[Any]:
        return {repr(field(p)) for p in clones}

    assert len(each(lambda p: p["status"]["podIP"])) == len(clones)
    assert len(each(lambda p: p["metadata"]["uid"])) == len(clones)
    assert len(each(lambda p: [c["containerID"] for c in p["status"]["containerStatuses"]])) == len(
        clones
    )
    assert len(each(lambda p: [v["name"] for v in p["spec"]["volumes"]])) == len(clones)
    # ...and each runs where it says, at its node's address.
    for pod in clones:
        node = pod["spec"]["nodeName"]
        assert node.startswith("ip-") and pod["status"]["hostIP"] == ".".join(
            node[3:].split(".")[0].split("-")
        )


def test_the_bench_runs_at_a_tiny_size(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--sizes", "40:3", "--keep", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    measured = r"^analyze 40 pods: [\d.]+ s \([\d.]+ s CPU\), peak RSS \d+ MB"
    assert re.search(measured, proc.stdout, re.M), proc.stdout
    assert "target peak RSS at most" in proc.stdout
    found = bench._findings(tmp_path / "report-40.json")
    for rule in (
        "hypervisor-not-ready/crashloop-recreate",
        "image-pull/registry-unreachable",
        "pod-pending/quota-or-capacity",
        "remote-gpu/worker-crashloop",
    ):
        assert rule in found
