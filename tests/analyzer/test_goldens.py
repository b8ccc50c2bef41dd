"""Every sample bundle's Markdown, HTML and JSON report (en) against its committed golden.

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
    for fmt in FORMATS:
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
    if UPDATE:
        for orphan in GOLDENS.iterdir():
            if orphan.name.rsplit(".", 1)[0] not in names:
                orphan.unlink()
    orphans = sorted(p.name for p in GOLDENS.iterdir() if p.name.rsplit(".", 1)[0] not in names)
    assert orphans == []
    assert sorted(p.name for p in GOLDENS.iterdir()) == sorted(
        f"{n}.{fmt}" for n in names for fmt in FORMATS
    )
