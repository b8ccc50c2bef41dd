"""Every known TensorFusion bug in rules/known-issues/ held to its own ranges.

For each entry, from the sample where it fires: at a version inside each affected range (both
release lines where both are) the finding names the bug and heads what it explains; at the
first fixed version the same signal no longer cites it; with the version unknown it says so and
only warns; and the healthy cluster at an affected version lists it under "Known issues of this
version" without a finding, the verdict untouched.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from samplekit import SAMPLES, members, report, rules
from variantkit import Variant
from versionkit import retag

from analyzer import run
from analyzer.rules.known import Affected
from analyzer.rules.loading import Rule
from k8s.semver import parse

OPERATOR = "tensorfusion/tensor-fusion-operator"
KNOWN = [r for r in rules() if r.known is not None]
CASES = [(r.id, i) for r in KNOWN for i in range(len(r.known.affected))]


def affected_version(a: Affected) -> str:
    """A version inside the range: its first, or the release just before its fix, or (open
    at both ends) the line's first release."""
    if a.low:
        return a.low
    if a.fixed is None:
        return f"{(a.line or 'v1')[1:]}.0.0"
    fixed = parse(a.fixed)
    assert fixed is not None
    if fixed.patch:
        return f"{fixed.major}.{fixed.minor}.{fixed.patch - 1}"
    return f"{fixed.major}.{fixed.minor - 1}.0"


def at(rule: Rule, sample: str, version: str | None, **kw: Any) -> dict[str, Any]:
    """The report of `sample` with the component of `rule` at `version`."""
    found = members(sample)
    if rule.known.component == "chart":
        chart = {"name": "tensor-fusion", "version": version or "", "appVersion": "1.0.0"}
        changed = retag(found, {}, helm={"chart": chart})
    else:
        changed = retag(found, {OPERATOR: version or "latest"}, start_lines=version is not None)
    return _analyse(changed, kw.pop("tmp"))


def _analyse(found: dict[str, bytes], tmp: Path) -> dict[str, Any]:
    directory = Variant(found).write(tmp)
    return run.run_analysis(run.AnalyzeOptions(bundle=directory)).report


def cited(report: dict[str, Any], rule_id: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule_id"] == rule_id]


@cache
def by_id() -> dict[str, Rule]:
    return {r.id: r for r in KNOWN}


def test_there_are_entries_for_both_components_and_lines() -> None:
    assert len(KNOWN) >= 1
    lines = {a.line for r in KNOWN for a in r.known.affected}
    assert {"v1", "v2"} <= lines


@pytest.mark.parametrize(("rule_id", "index"), CASES)
def test_an_affected_version_with_the_signal_cites_the_bug(
    rule_id: str, index: int, tmp_path: Path
) -> None:
    rule = by_id()[rule_id]
    a = rule.known.affected[index]
    version = affected_version(a)
    shown = at(rule, rule.raw["scenarios"]["fires"][0], version, tmp=tmp_path)
    found = cited(shown, rule_id)
    assert found, f"{rule_id} silent at {version}"
    for f in found:
        assert f"{rule.known.component} {version}" in f["title"]
        assert f["role"] == "root_cause", f"{rule_id} at {version} is not a root cause"
        assert f["evidence"][0].startswith(f"{rule.known.component} {version} (")
        if a.fixed:
            assert a.fixed in f["title"]
            assert f["commands"][0].startswith("helm upgrade ")
            assert "--version " in f["commands"][0]
    assert rule_id not in [k["rule_id"] for k in shown["known_issues"]]
    # What it explains nests under it.
    heads = {f["id"] for f in found}
    for f in shown["findings"]:
        if {*f["manual"], f["section"]} & set(rule.known.explains):
            assert f["caused_by"] in heads, f"{f['id']} is not under {rule_id}"


@pytest.mark.parametrize(
    ("rule_id", "index"), [(r, i) for r, i in CASES if by_id()[r].known.affected[i].fixed]
)
def test_the_first_fixed_version_no_longer_cites_it(
    rule_id: str, index: int, tmp_path: Path
) -> None:
    rule = by_id()[rule_id]
    fixed = rule.known.affected[index].fixed
    shown = at(rule, rule.raw["scenarios"]["fires"][0], fixed, tmp=tmp_path)
    assert cited(shown, rule_id) == []
    assert rule_id not in [k["rule_id"] for k in shown["known_issues"]]


@pytest.mark.parametrize(("rule_id", "index"), CASES)
def test_without_the_signal_it_is_a_known_issue_of_the_version_only(
    rule_id: str, index: int, tmp_path: Path
) -> None:
    rule = by_id()[rule_id]
    a = rule.known.affected[index]
    version = affected_version(a)
    shown = at(rule, "healthy", version, tmp=tmp_path)
    assert cited(shown, rule_id) == []
    notes = [k for k in shown["known_issues"] if k["rule_id"] == rule_id]
    assert len(notes) == 1
    assert notes[0]["version"] == version and notes[0]["fixed"] == (a.fixed or "")
    assert shown["summary"]["verdict"] == "no-problem"


@pytest.mark.parametrize("rule_id", [r.id for r in KNOWN if r.known.component == "operator"])
def test_an_unknown_version_with_the_signal_says_so_and_only_warns(
    rule_id: str, tmp_path: Path
) -> None:
    rule = by_id()[rule_id]
    shown = at(rule, rule.raw["scenarios"]["fires"][0], None, tmp=tmp_path)
    found = cited(shown, rule_id)
    assert found
    for f in found:
        assert f["severity"] in ("warning", "info")
        assert "running version is unknown" in f["title"]
        assert "image tag latest" in f["explanation"]
        assert "grep -m1 'version:'" in f["explanation"]
        # No upgrade is pinned to a version nobody knows is affected.
        assert not [c for c in f["commands"] if "controller.image.tag=" in c]


def test_the_fires_samples_run_an_affected_version() -> None:
    for rule in KNOWN:
        sample = rule.raw["scenarios"]["fires"][0]
        assert (SAMPLES / f"{sample}.tar.zst").exists()
        found = cited(report(sample), rule.id)
        assert found and "known bug of" in found[0]["title"], rule.id
