"""A fault on one GPU node is the root of what breaks on that node, never on another."""

from __future__ import annotations

from analyzer.results import Finding
from analyzer.rules.ranking import rank


def _f(rule: str, obj: str, *, node: str = "", causes: tuple[str, ...] = ()) -> Finding:
    return Finding(
        rule_id=rule,
        manual=(rule,),
        severity="error",
        section=rule.split("/")[0],
        objects=[obj],
        evidence=[],
        texts={},
        commands=[],
        vars={"node": node} if node else {},
        consequence_of=causes,
    )


CAUSES = (
    "hypervisor-not-ready/toolkit-validation-wait",
    "hypervisor-not-ready/toolkit-prereq-wait",
)


def _tree(findings: list[Finding]) -> dict[str, list[str]]:
    return {r.id: [c.id for c in r.children] for r in rank(findings)}


def test_each_node_s_consequences_nest_under_that_node_s_cause() -> None:
    wait_b = _f("hypervisor-not-ready/toolkit-validation-wait", "Pod/tf/hypervisor-b", node="b")
    controller = _f("hypervisor-not-ready/toolkit-prereq-wait", "Pod/tf/controller")
    down_a = _f("baseline/hypervisor-missing", "GPUNode/a", causes=CAUSES)
    down_b = _f("baseline/hypervisor-missing", "GPUNode/b", causes=CAUSES)
    slots_b = _f("hypervisor-not-ready/unschedulable-unhealthy", "Node/b", causes=CAUSES)
    assert _tree([down_a, down_b, slots_b, wait_b, controller]) == {
        # The cluster-wide cause explains node a, which has no cause of its own ...
        controller.id: [down_a.id],
        # ... and node b's own cause comes before it for node b.
        wait_b.id: [down_b.id, slots_b.id],
    }


def test_a_cause_on_another_node_explains_nothing() -> None:
    wait_b = _f("hypervisor-not-ready/toolkit-validation-wait", "Pod/tf/hypervisor-b", node="b")
    down_a = _f("baseline/hypervisor-missing", "GPUNode/a", causes=CAUSES)
    assert _tree([wait_b, down_a]) == {down_a.id: [], wait_b.id: []}
