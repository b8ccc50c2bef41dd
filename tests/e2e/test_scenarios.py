"""The round trip: scenario -> emulator -> real tf-collect -> bundle -> real tf-analyze.

Scenarios are discovered from sample_bundles/; adding one needs no Python. Each must give
exactly the findings its expect.yaml lists (manual key and objects) and the expected first
root cause, both from a fresh collection and from its committed sample bundle.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import pseudonymise

from analyzer.emulator.scenario import collect_args, load_scenario, scenario_names
from analyzer.emulator.server import Emulator

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd  # type: ignore[no-redef]

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
SCENARIOS = scenario_names(SAMPLES)


def _load_make_samples():
    path = SAMPLES.parent / "scripts" / "make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLE_ENV = _load_make_samples().SAMPLE_ENV


def expected(
    name: str, mapping: dict[str, str]
) -> tuple[set[tuple[str, tuple[str, ...]]], str | None]:
    spec = yaml.safe_load((SAMPLES / name / "expect.yaml").read_text())
    found = {
        (f["manual"], tuple(sorted(pseudonymise(o, mapping) for o in f.get("objects", []))))
        for f in spec.get("findings") or []
    }
    return found, spec.get("first_root_cause")


def collect(kubeconfig: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "collector",
            "--kubeconfig",
            str(kubeconfig),
            "-o",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **SAMPLE_ENV},
    )


_COLLECTED: dict[str, tuple[Path, dict[str, str]]] = {}


@pytest.fixture()
def fresh(tmp_path_factory):
    """Collect a scenario once per test session (both tests of a scenario share it)."""

    def get(name: str) -> tuple[Path, dict[str, str]]:
        if name not in _COLLECTED:
            _COLLECTED[name] = fresh_bundle(name, tmp_path_factory.mktemp(name))
        return _COLLECTED[name]

    return get


def fresh_bundle(name: str, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Collect the scenario with the samples' fixed key: the bundle and its redaction map."""
    with Emulator(load_scenario(SAMPLES / name)) as emu:
        kubeconfig = tmp_path / "kubeconfig"
        emu.write_kubeconfig(kubeconfig, context=f"sample-{name}")
        bundle = tmp_path / f"{name}.tar.zst"
        map_file = tmp_path / "redaction-map.json"
        extra = collect_args(SAMPLES / name)
        proc = collect(kubeconfig, bundle, "--redaction-map", str(map_file), *extra)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(bundle)
    return bundle, json.loads(map_file.read_text())["map"]


def analyze_json(bundle: Path, out: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "analyzer",
            str(bundle),
            "--format",
            "json",
            "-o",
            str(out),
            "--lang",
            "en",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def observed(report: dict[str, Any]) -> set[tuple[str, tuple[str, ...]]]:
    return {(key, tuple(sorted(f["objects"]))) for f in report["findings"] for key in f["manual"]}


def first_root(report: dict[str, Any]) -> str | None:
    roots = [f for f in report["findings"] if f["root_cause"]]
    return roots[0]["manual"][0] if roots else None


def test_scenarios_are_discovered() -> None:
    assert {"healthy", "controller-oom", "controller-bad-config", "pending-quota"} <= set(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_fresh_collection_gives_expected_findings(name: str, tmp_path: Path, fresh) -> None:
    bundle, mapping = fresh(name)
    report = analyze_json(bundle, tmp_path / "report.json")
    want, root = expected(name, mapping)
    assert observed(report) == want
    assert first_root(report) == root
    assert report["collection_gaps"] == []
    # Rules may be skipped for data a scenario does not collect (exec checks without --exec),
    # never fail.
    assert [r for r in report["rules"] if r["outcome"] == "error"] == []


@pytest.mark.parametrize("name", SCENARIOS)
def test_committed_sample_bundle_gives_expected_findings(name: str, tmp_path: Path, fresh) -> None:
    sample = SAMPLES / f"{name}.tar.zst"
    assert sample.exists(), f"run `python scripts/make_samples.py` to create {sample.name}"
    report = analyze_json(sample, tmp_path / "report.json")
    # The samples' fixed key makes a fresh collection's map valid for the committed bundle.
    _, mapping = fresh(name)
    want, root = expected(name, mapping)
    assert observed(report) == want
    assert first_root(report) == root
    # An unpacked bundle is an equally valid input and gives the same report.
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    with zstd.open(sample, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        tar.extractall(unpacked, filter="data")
    again = analyze_json(unpacked, tmp_path / "again.json")
    assert again["findings"] == report["findings"]
