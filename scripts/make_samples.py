#!/usr/bin/env python3
"""Regenerate every sample bundle: serve each scenario, run the real tf-collect against it.

    python scripts/make_samples.py            # all scenarios in sample_bundles/
    python scripts/make_samples.py healthy    # just these

Each scenario source sample_bundles/<name>/ becomes sample_bundles/<name>.tar.zst.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The scenario loader and the tf-collect runner are the tests' (tests/scenario*.py).
# The repo's packages before the test kits, so that tests/collector and tests/analyzer
# (folders without __init__) are not taken for the packages of those names.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scenariokit import SAMPLE_ENV, SAMPLES, collect
from scenarioloader import collect_args, collect_exit, load_scenario, scenario_names

from emulator.server import Emulator


def make(name: str) -> Path:
    out = SAMPLES / f"{name}.tar.zst"
    with Emulator(load_scenario(SAMPLES / name)) as emu:
        proc = collect(
            emu, out, "--force", *collect_args(SAMPLES / name), context=f"sample-{name}",
            env=SAMPLE_ENV,
        )
    if proc.returncode != collect_exit(SAMPLES / name):
        raise SystemExit(f"{name}: tf-collect exited {proc.returncode}: {proc.stderr.strip()}")
    return out


def main(argv: list[str]) -> None:
    names = argv or scenario_names(SAMPLES)
    for name in names:
        path = make(name)
        print(f"{path.relative_to(SAMPLES.parent)}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
