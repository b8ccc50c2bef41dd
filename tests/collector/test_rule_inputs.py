"""Every input a rule reads is gathered by tf-collect: by default, or only with --exec or
--metrics. `rule_inputs()` says which step gathers each (printed by `python -m pytest
tests/collector/test_rule_inputs.py -s -k table`); a rule whose inputs only --exec gathers is
skipped on most customers' bundles, so each must also decide without it or say why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from scenariokit import SAMPLES
from scenarioloader import collect_args

from collector.execs import CONTAINER_CHECKS, NODE_CHECKS
from collector.plan import (
    ALL_NAMESPACES,
    EVENTS,
    PLAN,
    TF_NAMESPACE,
    WORKLOAD_NAMESPACES,
    DescribeStep,
    ExecStep,
    GrepLogStep,
    HelmStep,
    ListStep,
    LogStep,
    MetricsStep,
    Step,
    default_plan,
)

RULES = Path(__file__).resolve().parents[2] / "rules"
DEFAULT = {s.id for s in default_plan()}


@dataclass(frozen=True)
class Input:
    rule: str
    what: str  # e.g. "logs of pods (component=operator)", "exec limits-not-enforced/tf-env"
    steps: tuple[str, ...]  # the plan steps that gather it
    optional: bool  # the rule decides without it

    @property
    def how(self) -> str:
        if not self.steps:
            return "not gathered"
        if any(s in DEFAULT for s in self.steps):
            return "default"
        return "--exec" if any(_step(s).__class__ is ExecStep for s in self.steps) else "--metrics"


def _step(step_id: str) -> Step:
    return next(s for s in PLAN if s.id == step_id)


def _component(for_each: dict[str, Any]) -> str | None:
    for part in str(for_each.get("labels") or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() == "tensor-fusion.ai/component" and value:
            return value.strip()
    return None


def _lists(resource: str, scope: str | None) -> tuple[str, ...]:
    """List steps that list `resource` where a rule looks: TensorFusion's namespace ("tf"),
    or every namespace ("all", or no scope)."""
    wanted = (
        {TF_NAMESPACE, ALL_NAMESPACES} if scope == "tf" else {ALL_NAMESPACES, WORKLOAD_NAMESPACES}
    )
    return tuple(
        s.id
        for s in PLAN
        if isinstance(s, ListStep)
        and any(r.display == resource for r in s.resources)
        and (not any(r.namespaced for r in s.resources) or s.namespace in wanted)
    )


def _event_steps(of: str) -> tuple[str, ...]:
    steps = tuple(s.id for s in PLAN if isinstance(s, ListStep) and EVENTS in s.resources)
    if of == "pod":  # the events of each unhealthy pod, as `kubectl describe` shows them
        steps += tuple(s.id for s in PLAN if isinstance(s, DescribeStep))
    return steps


def _log_steps(component: str | None) -> tuple[str, ...]:
    steps = []
    for s in PLAN:
        if isinstance(s, LogStep) and (
            component in s.components if component else s.select == "workloads"
        ):
            steps.append(s.id)
        if isinstance(s, GrepLogStep) and component == s.component:
            steps.append(s.id)
        if isinstance(s, DescribeStep) and component is None:
            steps.append(s.id)  # init-container logs of pods stuck in Init
    return tuple(steps)


def _exec_steps(check: str) -> tuple[str, ...]:
    ids = {c.id for c in CONTAINER_CHECKS}, {c.id for c in NODE_CHECKS}
    return tuple(
        s.id
        for s in PLAN
        if isinstance(s, ExecStep) and check in (ids[0] if s.target == "workloads" else ids[1])
    )


def rule_inputs(path: Path) -> list[Input]:
    rule = yaml.safe_load(path.read_text(encoding="utf-8"))
    rid = rule["id"]
    for_each = rule.get("for_each") or {}
    found = []
    if for_each:
        resource, scope = for_each["resource"], for_each.get("namespace")
        found.append(
            Input(rid, f"{resource} ({scope or 'cluster'})", _lists(resource, scope), False)
        )
    for name, spec in (rule.get("with") or {}).items():
        if not isinstance(spec, dict):
            continue
        optional = bool(spec.get("optional"))
        if "objects" in spec:
            what, steps = spec["objects"], _lists(spec["objects"], spec.get("namespace"))
            if what == "events":
                steps = _event_steps("any")
        elif "events_for" in spec:
            what, steps = f"events of the {spec['events_for']}", _event_steps(spec["events_for"])
        elif "logs" in spec:
            component = _component(for_each)
            what = f"logs of {'component=' + component if component else 'workload'} pods"
            steps = _log_steps(component)
        elif "exec" in spec:
            what, steps = f"exec {spec['check']}", _exec_steps(spec["check"])
        elif "helm" in spec:
            what, steps = "Helm release", tuple(s.id for s in PLAN if isinstance(s, HelmStep))
        elif "metrics" in spec:
            what, steps = "metrics", tuple(s.id for s in PLAN if isinstance(s, MetricsStep))
        else:
            raise AssertionError(f"{rid}: binding {name} of an unknown kind: {sorted(spec)}")
        found.append(Input(rid, f"{name}: {what}", steps, optional))
    return found


def all_inputs() -> list[Input]:
    return [i for path in sorted(RULES.glob("*/*.yaml")) for i in rule_inputs(path)]


INPUTS = all_inputs()


@pytest.mark.parametrize("item", INPUTS, ids=[f"{i.rule}:{i.what}" for i in INPUTS])
def test_each_input_is_gathered(item: Input) -> None:
    assert item.steps, f"{item.rule} reads {item.what}, which no collection step gathers"


def test_rules_with_exec_inputs_decide_without_exec_or_say_why() -> None:
    """Most customers run without --exec. A rule that reads an in-container check must also
    fire on a sample collected without --exec (from what logs, events or statuses already
    show; the check then confirms), or be one of the few whose evidence exists only inside a
    container (EXEC_ONLY, each saying why in its rule file)."""
    with_exec = sorted({i.rule for i in INPUTS if i.how == "--exec"})
    waiting = []
    for rid in with_exec:
        rule = yaml.safe_load((RULES / f"{rid}.yaml").read_text(encoding="utf-8"))
        plain = [s for s in rule["scenarios"]["fires"] if "--exec" not in collect_args(SAMPLES / s)]
        if not plain and rid not in EXEC_ONLY:
            waiting.append(rid)
        if plain and rid in EXEC_ONLY:
            waiting.append(f"{rid} fires without --exec on {plain[0]}: not EXEC_ONLY")
    assert waiting == []


# Rows whose only evidence is inside a container: nothing outside it prints the fault.
EXEC_ONLY: tuple[str, ...] = (
    # An absence: no limiter in LD_PRELOAD or /etc/ld.so.preload, which nothing logs.
    "limits-not-enforced/no-preload",
    # A GPU busier than the pod's share: only nvidia-smi in the pod shows GPU-Util.
    "limits-not-enforced/soft-burst",
)


def test_table(capsys: pytest.CaptureFixture[str]) -> None:
    """The table of inputs for the docs and the closing note (shown with -s)."""
    with capsys.disabled():
        for item in INPUTS:
            flag = " (optional)" if item.optional else ""
            print(f"{item.rule} | {item.what}{flag} | {item.how} | {', '.join(item.steps)}")
