"""Every sample bundle's JSON report (en) against its committed golden, and the Markdown and
HTML reports of four representative bundles: the layout of the other reports is the same
templates over the same JSON, so a template or style change rewrites a few files, not 76.

Refresh them all with one switch: `TF_UPDATE_GOLDENS=1 pytest tests/analyzer/test_goldens.py`,
then read the diff before committing it. Each bundle is analysed once, in-process; each format
is rendered twice, so output that is not byte-stable fails here even when the golden is fresh.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer import run
from analyzer.report.render import FORMATS, render
from analyzer.rules.loading import load_rules

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bundles"
GOLDENS = ROOT / "tests" / "goldens"
BUNDLES = sorted(SAMPLES.glob("*.tar.zst"))
UPDATE = os.environ.get("TF_UPDATE_GOLDENS") == "1"
# No problem found; one critical root cause; a root cause with a consequence nested under it;
# several root causes with the GPU discovery chain and capacity views.
LAYOUT = ("healthy", "controller-bad-config", "webhook-rejects-cascade",
          "gpu-discovery-unknown-model-tflops")  # fmt: skip


def _formats(name: str) -> tuple[str, ...]:
    return FORMATS if name in LAYOUT else ("json",)


def _name(bundle: Path) -> str:
    return bundle.name.removesuffix(".tar.zst")


@pytest.fixture(scope="module", autouse=True)
def _rules_loaded_once():
    """Loading (and validating) the shipped rules is most of the time of one bundle."""
    rules = load_rules(None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run, "load_rules", lambda rules_dir: rules)
        yield


def analyzed(bundle: Path) -> dict:
    return run.run_analysis(run.AnalyzeOptions(bundle=bundle, lang="en")).report


@pytest.mark.parametrize("bundle", BUNDLES, ids=_name)
def test_reports_match_their_goldens(bundle: Path) -> None:
    report = analyzed(bundle)
    stale = []
    for fmt in _formats(_name(bundle)):
        text = render(report, fmt)
        assert render(report, fmt) == text, f"{fmt} report of {bundle.name} is not byte-stable"
        golden = GOLDENS / f"{_name(bundle)}.{fmt}"
        if UPDATE:
            golden.write_bytes(text.encode("utf-8"))
        elif not golden.exists() or golden.read_bytes() != text.encode("utf-8"):
            stale.append(golden.name)
    assert not stale, f"differ from the report (TF_UPDATE_GOLDENS=1 refreshes them): {stale}"


def test_the_report_does_not_depend_on_how_the_bundle_was_named(monkeypatch) -> None:
    bundle = SAMPLES / "controller-bad-config.tar.zst"
    absolute = analyzed(bundle)
    monkeypatch.chdir(SAMPLES)
    relative = analyzed(Path(bundle.name))
    assert absolute == relative
    assert absolute["bundle"]["source"] == "controller-bad-config.tar.zst"


def test_every_golden_belongs_to_a_sample_bundle() -> None:
    assert len(BUNDLES) > 10  # the sample bundles were found
    names = {_name(b) for b in BUNDLES}
    assert set(LAYOUT) <= names
    wanted = {f"{n}.{fmt}" for n in names for fmt in _formats(n)}
    if UPDATE:
        for orphan in GOLDENS.iterdir():
            if orphan.name not in wanted:
                orphan.unlink()
    assert sorted(p.name for p in GOLDENS.iterdir()) == sorted(wanted)
