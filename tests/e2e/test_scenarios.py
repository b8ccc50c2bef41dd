"""The round trip: scenario -> emulator -> tf-collect -> bundle -> tf-analyze.

Scenarios are discovered from sample_bundles/; adding one needs no Python. Each must give
exactly the findings its expect.yaml lists (manual key and objects) and the expected first
root cause, both from a fresh collection and from its committed sample bundle, packed and
unpacked.

A dozen scenarios (ROUND_TRIPS) go through the real commands, each in its own process:
tf-collect's exit code and the bundle it writes, tf-analyze's report file or terminal summary
and its exit code, in every format and both languages, on a bundle and on an unpacked
directory. The others run tf-collect's command and tf-analyze's core in this process: the
same code without a process start per step.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from bundlekit import pseudonymise
from samplekit import analyse
from samplekit import report as sample_report
from scenariokit import SAMPLES, collect_scenario, first_root, observed
from scenarioloader import collect_exit, scenario_names

from analyzer.errors import ExitCode
from analyzer.report.render import render
from analyzer.report.terminal import WIDTH, summary_lines
from tf_support_schemas.archive import zstd

SCENARIOS = scenario_names(SAMPLES)


@dataclass(frozen=True)
class Trip:
    """How tf-analyze is run on a scenario's fresh bundle, and the exit code it must give."""

    fmt: str | None  # None: the terminal summary on standard output
    lang: str
    exit: ExitCode = ExitCode.OK
    fail_on: str | None = None
    unpacked: bool = False  # analyse the bundle unpacked into a directory


FINDINGS = ExitCode.FINDINGS
ROUND_TRIPS = {
    "healthy": Trip(None, "en", fail_on="warning"),
    "controller-oom": Trip(None, "zh", FINDINGS, fail_on="critical"),
    "controller-bad-config": Trip("md", "en", FINDINGS, fail_on="error"),
    "webhook-rejects-cascade": Trip("md", "zh"),
    "gpu-discovery-unknown-model-tflops": Trip("html", "en"),
    "cuda-oom-message-whole-gpu": Trip("html", "zh", FINDINGS, fail_on="error"),
    # Notes only: --fail-on warning has nothing to fail on.
    "ignorable-cpuinfo-sve": Trip("json", "en", fail_on="warning"),
    "pending-quota": Trip("json", "zh", unpacked=True),
    # tf-collect exits 3 on both: TensorFusion not found, or not where it was asked for.
    "baseline-tf-not-installed": Trip("json", "en"),
    "baseline-wrong-namespace": Trip("md", "en", unpacked=True),
    "healthy-gke": Trip("html", "en", unpacked=True),
    "hypervisor-crashloop-recreate": Trip(None, "en", unpacked=True),
}


def expected(
    name: str, mapping: dict[str, str]
) -> tuple[set[tuple[str, tuple[str, ...]]], str | None]:
    spec = yaml.safe_load((SAMPLES / name / "expect.yaml").read_text())
    found = {
        (
            f.get("manual") or f["rule"],
            tuple(sorted(pseudonymise(o, mapping) for o in f.get("objects", []))),
        )
        for f in spec.get("findings") or []
    }
    return found, spec.get("first_root_cause")


_COLLECTED: dict[str, tuple[Path, dict[str, str]]] = {}


@pytest.fixture()
def fresh(tmp_path_factory):
    """Collect a scenario once per test session (the tests of a scenario share it)."""

    def get(name: str) -> tuple[Path, dict[str, str]]:
        if name not in _COLLECTED:
            _COLLECTED[name] = fresh_bundle(name, tmp_path_factory.mktemp(name))
        return _COLLECTED[name]

    return get


def fresh_bundle(name: str, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Collect the scenario with the samples' fixed key: the bundle and its redaction map."""
    proc, bundle, mapping = collect_scenario(name, tmp_path, in_process=name not in ROUND_TRIPS)
    assert proc.returncode == collect_exit(SAMPLES / name), proc.stderr
    assert proc.stdout.strip() == str(bundle)
    return bundle, mapping


def unpack(bundle: Path, directory: Path) -> Path:
    directory.mkdir()
    with zstd.open(bundle, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        tar.extractall(directory, filter="data")
    return directory


def test_scenarios_are_discovered() -> None:
    assert {"healthy", "controller-oom", "controller-bad-config", "pending-quota"} <= set(SCENARIOS)
    assert set(ROUND_TRIPS) <= set(SCENARIOS)


def test_the_round_trips_cover_every_format_language_and_exit_code() -> None:
    trips = ROUND_TRIPS.values()
    assert {t.fmt for t in trips} == {None, "md", "html", "json"}
    assert {t.lang for t in trips} == {"en", "zh"}
    assert {t.exit for t in trips} == {ExitCode.OK, ExitCode.FINDINGS}
    assert any(t.unpacked for t in trips) and any(not t.unpacked for t in trips)
    assert {collect_exit(SAMPLES / name) for name in ROUND_TRIPS} == {0, 3}


@pytest.mark.parametrize("name", SCENARIOS)
def test_fresh_and_committed_bundles_give_expected_findings(
    name: str, tmp_path: Path, fresh
) -> None:
    """One test for both, so that a scenario is collected once per session."""
    bundle, mapping = fresh(name)
    want, root = expected(name, mapping)
    report = analyse(bundle).report
    assert observed(report) == want, "fresh collection"
    assert first_root(report) == root, "fresh collection"
    assert report["collection_gaps"] == []
    # Rules may be skipped for data a scenario does not collect (exec checks without --exec),
    # never fail.
    assert [r for r in report["rules"] if r["outcome"] == "error"] == []

    sample = SAMPLES / f"{name}.tar.zst"
    assert sample.exists(), f"run `python scripts/make_samples.py` to create {sample.name}"
    # The samples' fixed key makes a fresh collection's map valid for the committed bundle.
    committed = sample_report(name)
    assert observed(committed) == want, "committed sample"
    assert first_root(committed) == root, "committed sample"
    # An unpacked bundle is an equally valid input and gives the same report.
    again = analyse(unpack(sample, tmp_path / "unpacked")).report
    assert again["findings"] == committed["findings"]


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
def test_the_real_commands_write_what_the_core_reports(name: str, tmp_path: Path, fresh) -> None:
    """tf-analyze, in its own process on a bundle tf-collect wrote in its own, writes exactly
    the report the analyzer's core renders here, and exits with the code of its findings."""
    trip = ROUND_TRIPS[name]
    bundle, _ = fresh(name)
    if trip.unpacked:
        bundle = unpack(bundle, tmp_path / "unpacked")
    out = tmp_path / f"report.{trip.fmt}"
    args = [str(bundle), "--lang", trip.lang]
    args += ["--format", trip.fmt, "-o", str(out)] if trip.fmt else []
    args += ["--fail-on", trip.fail_on] if trip.fail_on else []
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == trip.exit, proc.stderr
    report = analyse(bundle, trip.lang).report
    if trip.fmt is None:
        lines = summary_lines(report, verbose=False, color=False, width=WIDTH)
        assert proc.stdout == "".join(f"{line}\n" for line in lines)
    else:
        assert out.read_text("utf-8") == render(report, trip.fmt)
        assert proc.stdout.splitlines()[-1] == f"Report: {out}"


def test_a_bad_bundle_is_refused_with_its_code_and_no_report(tmp_path: Path, fresh) -> None:
    bundle, _ = fresh("healthy")
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", str(cut), "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == ExitCode.TRUNCATED, proc.stderr
    assert proc.stderr.startswith("tf-analyze: ") and proc.stderr.count("\n") == 1
    assert not out.exists()
