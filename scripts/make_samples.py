#!/usr/bin/env python3
"""Regenerate every sample bundle: serve each scenario, run the real tf-collect against it.

    python scripts/make_samples.py            # all scenarios in sample_bundles/
    python scripts/make_samples.py healthy    # just these

Each scenario source sample_bundles/<name>/ becomes sample_bundles/<name>.tar.zst.
"""

from __future__ import annotations

import sys
from pathlib import Path

from emulator.collect import collect
from emulator.scenario import collect_args, collect_exit, load_scenario, scenario_names
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bundles"
# A fixed creation time and a fixed redaction key keep regenerated bundles comparable, and
# let the tests map a scenario's real names to the pseudonyms in its bundle. Never use a
# fixed key for a real bundle: whoever knows it can reverse the address pseudonyms.
EPOCH = "1796033400"  # 2026-11-30T10:10:00Z
SAMPLE_KEY = "73616d706c652d62756e646c65732d6f6e6c792d6e6f742d7365637265742121"
SAMPLE_ENV = {"SOURCE_DATE_EPOCH": EPOCH, "TF_COLLECT_REDACTION_KEY": SAMPLE_KEY}


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
