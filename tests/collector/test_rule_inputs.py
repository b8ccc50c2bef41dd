"""Every input a rule reads is gathered by tf-collect: by default, or only with --exec or
--metrics. `rule_inputs()` says which step gathers each (printed by `python -m pytest
tests/collector/test_rule_inputs.py -s -k table`); a rule whose inputs only --exec gathers is
skipped on most customers' bundles, so each must also decide without it or say why not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from scenariokit import SAMPLES
from scenarioloader import collect_args

from analyzer.bundle import Bundle
from collector.execs import CONTAINER_CHECKS, NODE_CHECKS
from collector.plan import (
    ALL_NAMESPACES,
    EVENTS,
    PLAN,
    TF_NAMESPACE,
    WORKLOAD_NAMESPACES,
    ExecStep,
    GrepLogStep,
    ListStep,
    LogStep,
    Step,
    default_plan,
)
from k8s.tensorfusion import COMPONENT
from tf_support_schemas import load as load_schema
from tf_support_schemas.sources import SOURCES, source_of

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
        if key.strip() == COMPONENT and value:
            return value.strip()
    return None


def _lists(step: Step, resource: str, scope: str | None) -> bool:
    """Whether a step lists `resource` where a rule looks: TensorFusion's namespace ("tf"),
    or every namespace ("all", or no scope)."""
    wanted = (
        {TF_NAMESPACE, ALL_NAMESPACES} if scope == "tf" else {ALL_NAMESPACES, WORKLOAD_NAMESPACES}
    )
    return (
        isinstance(step, ListStep)
        and any(r.display == resource for r in step.resources)
        and (not any(r.namespaced for r in step.resources) or step.namespace in wanted)
    )


def _exec_checks(step: ExecStep) -> set[str]:
    return {c.id for c in (CONTAINER_CHECKS if step.target == "workloads" else NODE_CHECKS)}


def _gathers_objects(step: Step, spec: dict[str, Any], _for_each: dict[str, Any]) -> bool:
    if spec["objects"] == "events":  # bound, they are read wherever they were listed
        return isinstance(step, ListStep) and EVENTS in step.resources
    return _lists(step, spec["objects"], spec.get("namespace"))


def _gathers_logs(step: Step, _spec: dict[str, Any], for_each: dict[str, Any]) -> bool:
    component = _component(for_each)
    if isinstance(step, LogStep):
        return component in step.components if component else step.select == "workloads"
    if isinstance(step, GrepLogStep):
        return step.component == component
    return component is None  # init-container logs of pods stuck in Init


# Source -> whether a step that gathers it gathers what one binding asks for (given the
# binding and the rule's `for_each`). Helm values and metrics have one step each.
GATHERS: dict[str, Callable[[Any, dict[str, Any], dict[str, Any]], bool]] = {
    "objects": _gathers_objects,
    # Listed events, and those of each unhealthy pod as `kubectl describe` shows them.
    "events_for": lambda step, spec, _: isinstance(step, ListStep) or spec["events_for"] == "pod",
    "logs": _gathers_logs,
    "exec": lambda step, spec, _: spec["check"] in _exec_checks(step),
    "helm": lambda *_: True,
    "metrics": lambda *_: True,
}


def _steps(spec: dict[str, Any], for_each: dict[str, Any]) -> tuple[str, ...]:
    """The plan steps that gather what a binding reads."""
    source = source_of(spec).name
    return tuple(s.id for s in PLAN if source in s.sources and GATHERS[source](s, spec, for_each))


def _what(spec: dict[str, Any], for_each: dict[str, Any]) -> str:
    source = source_of(spec).name
    if source == "objects":
        return spec["objects"]
    if source == "events_for":
        return f"events of the {spec['events_for']}"
    if source == "logs":
        component = _component(for_each)
        return f"logs of {'component=' + component if component else 'workload'} pods"
    if source == "exec":
        return f"exec {spec['check']}"
    return "Helm release" if source == "helm" else "metrics"


def rule_inputs(path: Path) -> list[Input]:
    rule = yaml.safe_load(path.read_text(encoding="utf-8"))
    rid = rule["id"]
    for_each = rule.get("for_each") or {}
    found = []
    if for_each:
        resource, scope = for_each["resource"], for_each.get("namespace")
        steps = tuple(s.id for s in PLAN if _lists(s, resource, scope))
        found.append(Input(rid, f"{resource} ({scope or 'cluster'})", steps, False))
    for name, spec in (rule.get("with") or {}).items():
        if isinstance(spec, dict):
            what, steps = _what(spec, for_each), _steps(spec, for_each)
            found.append(Input(rid, f"{name}: {what}", steps, bool(spec.get("optional"))))
    return found


def all_inputs() -> list[Input]:
    return [i for path in sorted(RULES.glob("*/*.yaml")) for i in rule_inputs(path)]


INPUTS = all_inputs()


@pytest.mark.parametrize("item", INPUTS, ids=[f"{i.rule}:{i.what}" for i in INPUTS])
def test_each_input_is_gathered(item: Input) -> None:
    assert item.steps, f"{item.rule} reads {item.what}, which no collection step gathers"


def test_each_binding_kind_is_a_source() -> None:
    """A rule can bind only what the registry names: every kind of binding the rule schema
    allows is a source, and every source is one of them."""
    kinds = {b["required"][0] for b in load_schema("rule")["$defs"]["binding"]["oneOf"]}
    assert kinds == set(SOURCES)


def test_each_source_has_a_step_and_an_accessor() -> None:
    gathered = {name for step in PLAN for name in step.sources}
    assert gathered == set(SOURCES)
    artifacts = load_schema("manifest")["$defs"]["artifact"]["properties"]["type"]["enum"]
    for source in SOURCES.values():
        assert callable(getattr(Bundle, source.accessor, None)), source
        assert source.artifact in artifacts, source


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
