"""What the report promises on every sample bundle, and the whole Markdown and HTML reports of
four of them.

Every sample's report validates against its schema, renders byte-stable, counts in its summary
what it lists, nests each consequence under its cause, and gives every finding the fields a
renderer shows. Which findings a sample gives (manual key, objects, first root cause) is its
expect.yaml's, checked in tests/e2e/test_scenarios.py; the order of the findings and which one
heads which is tests/goldens/ranking.yaml's (ids only, so wording changes leave it alone).

The layout of every report is the same templates over the same JSON, so four samples hold the
whole Markdown and HTML: a root cause with a consequence, several root causes with the GPU
discovery chain and an unknown capacity, a cluster without TensorFusion (skipped rules, missing
data, tf-collect's warnings), and a problem beside a note, in Chinese.

Refresh the goldens with one switch: `TF_UPDATE_GOLDENS=1 pytest tests/analyzer/test_goldens.py`,
then read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from samplekit import NAMES, SAMPLES, analyse, report, sample

import tf_support_schemas as schemas
from analyzer.report.render import FORMATS, render
from analyzer.verdict import verdict

GOLDENS = Path(__file__).resolve().parents[1] / "goldens"
RANKING = GOLDENS / "ranking.yaml"
UPDATE = os.environ.get("TF_UPDATE_GOLDENS") == "1"
LAYOUT = {
    "webhook-rejects-cascade": "en",
    "gpu-discovery-unknown-model-tflops": "en",
    "baseline-tf-not-installed": "en",
    "cuda-oom-message-whole-gpu": "zh",
}
PAGES = tuple(fmt for fmt in FORMATS if fmt != "json")


def _golden(name: str, fmt: str) -> Path:
    lang = LAYOUT[name]
    return GOLDENS / (f"{name}.{fmt}" if lang == "en" else f"{name}.{lang}.{fmt}")


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_markdown_and_html_match_their_goldens(name: str) -> None:
    data = report(name, LAYOUT[name])
    stale = []
    for fmt in PAGES:
        text = render(data, fmt)
        assert render(data, fmt) == text, f"{fmt} report of {name} is not byte-stable"
        golden = _golden(name, fmt)
        if UPDATE:
            golden.write_bytes(text.encode("utf-8"))
        elif not golden.exists() or golden.read_bytes() != text.encode("utf-8"):
            stale.append(golden.name)
    assert not stale, f"differ from the report (TF_UPDATE_GOLDENS=1 refreshes them): {stale}"


def test_the_layout_samples_show_what_they_were_chosen_for() -> None:
    summaries = {name: report(name, lang)["summary"] for name, lang in LAYOUT.items()}
    assert summaries["webhook-rejects-cascade"]["consequences"] > 0
    assert summaries["gpu-discovery-unknown-model-tflops"]["root_causes"] > 1
    assert summaries["baseline-tf-not-installed"]["missing"]
    assert summaries["baseline-tf-not-installed"]["rules"]["skipped"] > 0
    assert summaries["cuda-oom-message-whole-gpu"]["notes"] > 0
    assert summaries["cuda-oom-message-whole-gpu"]["root_causes"] > 0
    assert report("baseline-tf-not-installed")["bundle"]["warnings"]


def _ranking(data: dict[str, Any]) -> list[str | dict[str, list[str]]]:
    """The root causes in report order, each with its consequences in order."""
    return [
        {f["id"]: f["consequences"]} if f["consequences"] else f["id"]
        for f in data["findings"]
        if f["root_cause"]
    ]


def test_findings_keep_their_order_and_their_causes() -> None:
    """Order and nesting pinned where there is more than one finding (one is its own order)."""
    ranked = {name: _ranking(report(name)) for name in NAMES if len(report(name)["findings"]) > 1}
    if UPDATE:
        RANKING.write_text(yaml.safe_dump(ranked, sort_keys=True, width=200), "utf-8")
    assert ranked == yaml.safe_load(RANKING.read_text("utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_the_report_keeps_its_promises(name: str) -> None:
    text = render(report(name), "json")
    assert render(report(name), "json") == text, "not byte-stable"
    data = json.loads(text)
    assert schemas.first_error("report", data) is None
    findings = data["findings"]
    by_id = {f["id"]: f for f in findings}
    assert len(by_id) == len(findings), "finding ids repeat"
    # Two findings a reader cannot tell apart by their titles would be one finding to them.
    assert len({f["title"] for f in findings}) == len(findings), "titles repeat"
    # Each root cause is followed by its consequences, and a consequence has no consequences.
    listed = [
        i for f in findings if f["root_cause"] for i in (f["id"], *f["consequences"])
    ]  # fmt: skip
    assert listed == [f["id"] for f in findings]
    for f in findings:
        assert f["root_cause"] == (f["caused_by"] is None)
        if f["caused_by"]:
            assert f["id"] in by_id[f["caused_by"]]["consequences"]
            assert f["consequences"] == []
        for field in ("title", "explanation", "fix", "section_title"):
            assert f[field].strip(), f"{f['id']}: empty {field}"
        assert f["evidence"], f"{f['id']}: no evidence"
    roots = [f for f in findings if f["root_cause"]]
    s = data["summary"]
    assert s["root_causes"] == sum(f["severity"] != "info" for f in roots)
    assert s["notes"] == sum(f["severity"] == "info" for f in roots)
    assert s["consequences"] == len(findings) - len(roots)
    assert s["by_severity"] == {
        sev: sum(f["severity"] == sev for f in findings) for sev in s["by_severity"]
    }
    outcomes = Counter(r["outcome"] for r in data["rules"])
    assert s["rules"] == {outcome: outcomes[outcome] for outcome in s["rules"]}
    assert s["rules"]["fired"] == len({f["rule_id"] for f in findings})
    assert s["verdict"] == verdict(sample(name).analysis)
    views = data["views"]
    assert s["warning_events"] == views["warnings"]["total"]
    assert data["bundle"]["source"] == f"{name}.tar.zst"


def test_the_report_does_not_depend_on_how_the_bundle_was_named(monkeypatch) -> None:
    bundle = SAMPLES / "controller-bad-config.tar.zst"
    monkeypatch.chdir(SAMPLES)
    relative = analyse(Path(bundle.name)).report
    assert relative == report("controller-bad-config")
    assert relative["bundle"]["source"] == "controller-bad-config.tar.zst"


def test_every_golden_belongs_to_a_layout_sample() -> None:
    assert len(NAMES) > 10  # the sample bundles were found
    assert set(LAYOUT) <= set(NAMES)
    wanted = {_golden(name, fmt).name for name in LAYOUT for fmt in PAGES} | {RANKING.name}
    if UPDATE:
        for orphan in GOLDENS.iterdir():
            if orphan.name not in wanted:
                orphan.unlink()
    assert sorted(p.name for p in GOLDENS.iterdir()) == sorted(wanted)
