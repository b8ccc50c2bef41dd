"""Every shipped rule is held to two scenarios it names in its own file (`scenarios:`): one
where it must fire, and a near miss where it must run on the evidence and stay silent (a
cluster that looks like its fault but has another cause, or none). A rule that is skipped or
ends in error in its near miss proves nothing, so that fails too.
"""

from __future__ import annotations

import pytest
from samplekit import SAMPLES, rules, sample
from scenarioloader import scenario_names

DECLARED = {rule.id: rule.raw.get("scenarios") or {} for rule in rules()}


def _outcomes(scenario: str) -> dict[str, tuple[str, list[str]]]:
    """rule id -> (outcome, what it said) for the committed sample bundle of `scenario`."""
    analysis = sample(scenario).analysis
    return {
        r.rule_id: (r.outcome, [f.texts["title"]["en"] for f in r.findings] + r.errors)
        for r in analysis.results
    }


@pytest.mark.parametrize("rule_id", sorted(DECLARED))
def test_rule_fires_in_its_scenario_and_stays_silent_in_its_near_miss(rule_id: str) -> None:
    spec = DECLARED[rule_id]
    assert spec.get("fires") and spec.get("silent"), (
        f"{rule_id}: name a scenario where it fires and a near miss where it stays silent"
    )
    known = set(scenario_names(SAMPLES))
    for name in spec["fires"] + spec["silent"]:
        assert name in known, f"{rule_id}: no sample scenario {name!r}"
    for name in spec["fires"]:
        outcome, said = _outcomes(name)[rule_id]
        assert outcome == "fired", f"{rule_id} in {name}: {outcome} {said}"
    for name in spec["silent"]:
        outcome, said = _outcomes(name)[rule_id]
        assert outcome == "passed", f"{rule_id} in near miss {name}: {outcome} {said}"


def test_every_near_miss_scenario_is_named_by_a_rule() -> None:
    """A near miss nobody names holds no rule to account: it is named where it belongs."""
    named = {n for spec in DECLARED.values() for n in spec.get("silent", [])}
    near_misses = {n for n in scenario_names(SAMPLES) if n.startswith("near-miss-")}
    assert near_misses <= named, sorted(near_misses - named)
