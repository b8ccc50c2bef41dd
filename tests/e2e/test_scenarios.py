"""The round trip: scenario -> emulator -> real tf-collect -> bundle -> real tf-analyze.

Scenarios are discovered from sample_bundles/; adding one needs no Python. Each must give
exactly the findings its expect.yaml lists (manual key and objects) and the expected first
root cause, both from a fresh collection and from its committed sample bundle.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
import yaml
from bundlekit import pseudonymise
from scenariokit import SAMPLES, analyze_json, collect_scenario, first_root, observed
from scenarioloader import collect_exit, scenario_names

from tf_support_schemas.archive import zstd

SCENARIOS = scenario_names(SAMPLES)


def expected(
    name: str, mapping: dict[str, str]
) -> tuple[set[tuple[str, tuple[str, ...]]], str | None]:
    spec = yaml.safe_load((SAMPLES / name / "expect.yaml").read_text())
    found = {
        (f["manual"], tuple(sorted(pseudonymise(o, mapping) for o in f.get("objects", []))))
        for f in spec.get("findings") or []
    }
    return found, spec.get("first_root_cause")


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
    proc, bundle, mapping = collect_scenario(name, tmp_path)
    assert proc.returncode == collect_exit(SAMPLES / name), proc.stderr
    assert proc.stdout.strip() == str(bundle)
    return bundle, mapping


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
