#!/usr/bin/env python3
"""Regenerate every sample bundle: serve each scenario, run the real tf-collect against it.

    python scripts/make_samples.py            # all scenarios in sample_bundles/
    python scripts/make_samples.py healthy    # just these

Each scenario source sample_bundles/<name>/ becomes sample_bundles/<name>.tar.zst.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from analyzer.emulator.scenario import load_scenario, scenario_names
from analyzer.emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bundles"
# A fixed creation time keeps regenerated bundles comparable.
EPOCH = "1796033400"  # 2026-11-30T10:10:00Z


def make(name: str) -> Path:
    out = SAMPLES / f"{name}.tar.zst"
    with tempfile.TemporaryDirectory() as tmp, Emulator(load_scenario(SAMPLES / name)) as emu:
        kubeconfig = Path(tmp) / "kubeconfig"
        emu.write_kubeconfig(kubeconfig, context=f"sample-{name}")
        env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
        proc = subprocess.run(
            [sys.executable, "-m", "collector", "--kubeconfig", str(kubeconfig), "-o", str(out)],
            env=env,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        raise SystemExit(f"{name}: tf-collect exited {proc.returncode}: {proc.stderr.strip()}")
    return out


def main(argv: list[str]) -> None:
    names = argv or scenario_names(SAMPLES)
    for name in names:
        path = make(name)
        print(f"{path.relative_to(SAMPLES.parent)}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
