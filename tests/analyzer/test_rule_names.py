"""Rules say each thing once: named expressions (`let`) and functions defined in CEL that several
rules share (`rules/_functions.yaml`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import make_bundle

from analyzer.bundle import Bundle
from analyzer.errors import RuleLoadError
from analyzer.rules import cel
from analyzer.rules.engine import analyze
from analyzer.rules.functions import FUNCTIONS
from analyzer.rules.loading import FUNCTIONS_FILE, default_rules_dir, load_functions, load_rules

RULE = {
    "id": "controller-crash/oom-killed",
    "manual": ["controller-crash/oom-killed"],
    "severity": "critical",
    "for_each": {"resource": "pods", "namespace": "all", "as": "pod"},
    "title": {"en": "{{ name }}: {{ restarts }}", "zh": "t"},
    "explanation": {"en": "e", "zh": "e"},
    "fix": {"en": "f", "zh": "f"},
}


def _pod(name: str, restarts: list[int]) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"containers": [{"name": f"c{i}"} for i in range(len(restarts))]},
        "status": {
            "containerStatuses": [
                {"name": f"c{i}", "restartCount": n} for i, n in enumerate(restarts)
            ]
        },
    }


def _rules(root: Path, rule: dict[str, Any], functions: dict[str, Any] | None = None) -> Path:
    path = root / "controller-crash" / "oom-killed.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(rule, allow_unicode=True, sort_keys=False))
    if functions is not None:
        (root / FUNCTIONS_FILE).write_text(yaml.safe_dump(functions, sort_keys=False))
    return root


def _fired(tmp_path: Path, rules: Path, pods: list[dict[str, Any]]) -> list[tuple[str, str]]:
    bundle = Bundle.open(make_bundle(tmp_path / "b.tar.zst", objects={("", "pods"): pods}))
    (result,) = analyze(bundle, load_rules(rules)).results
    assert result.outcome in ("fired", "passed"), result.reason()
    return [(f.objects[0], f.texts["title"]["en"]) for f in result.findings]


RESTARTS = 'dig(pod, "status.containerStatuses", []).map(c, dig(c, "restartCount", 0))'


def test_a_let_is_read_by_the_condition_the_evidence_and_the_vars(tmp_path: Path) -> None:
    rule = {
        **RULE,
        "let": {"restarts": RESTARTS, "crashing": "restarts.exists(n, n > 3)"},
        "when": "crashing",
        "vars": {"name": "pod.metadata.name", "restarts": 'restarts.map(n, string(n)).join(",")'},
        "evidence": ['"restarts: " + restarts.map(n, string(n)).join(",")'],
    }
    pods = [_pod("calm", [0, 1]), _pod("looping", [0, 7])]
    assert _fired(tmp_path, _rules(tmp_path / "r", rule), pods) == [
        ("Pod/ml/looping", "looping: 0,7")
    ]


def test_a_shared_function_answers_for_every_rule_that_calls_it(tmp_path: Path) -> None:
    functions = {
        "max_restarts": {
            "description": "The most restarts of any container of a pod.",
            "params": ["p"],
            "expr": 'max(dig(p, "status.containerStatuses", []).map(c, c.restartCount), 0)',
        },
        "crash_looping": {
            "description": "A pod whose containers restarted more than `limit` times.",
            "params": ["p", "limit"],
            "expr": "max_restarts(p) > limit",
        },
    }
    rule = {
        **RULE,
        "when": "crash_looping(pod, 3)",
        "vars": {"name": "pod.metadata.name", "restarts": "string(max_restarts(pod))"},
    }
    pods = [_pod("calm", [2]), _pod("looping", [1, 9])]
    rules = _rules(tmp_path / "r", rule, functions)
    assert _fired(tmp_path, rules, pods) == [("Pod/ml/looping", "looping: 9")]


def test_a_function_sees_only_its_arguments(tmp_path: Path) -> None:
    # The caller's names (a comprehension variable `p` here) neither leak into the body nor
    # change after the call: arguments are evaluated in the caller's scope, first.
    twice = {"twice": {"description": "Twice.", "params": ["p"], "expr": "p * 2"}}
    defined = {"twice": cel.Function.define("twice", ("p",), "p * 2")}
    program = cel.compile("[1, 2].map(p, twice(p + 1) + p)", defined=defined)
    assert program.run({}) == [5, 8]
    with pytest.raises(RuleLoadError, match="reads pod, which is not one of its parameters"):
        load_rules(_rules(tmp_path, {**RULE, "when": "true"}, {**twice, "bad": {
            "description": "x", "params": ["p"], "expr": "pod.metadata.name == p"}}))  # fmt: skip


FUNCTION_ERRORS = {
    "calls a later function": (
        {"a": {"description": "x", "params": ["p"], "expr": "b(p)"},
         "b": {"description": "x", "params": ["p"], "expr": "p"}},
        "_functions.yaml: a: undeclared function 'b'",
    ),
    "shadows a built-in": (
        {"size": {"description": "x", "params": ["p"], "expr": "p"}},
        "_functions.yaml: size: a built-in function has this name",
    ),
    "no description": (
        {"a": {"params": ["p"], "expr": "p"}},
        "_functions.yaml: a: 'description' is a required property",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FUNCTION_ERRORS))
def test_a_bad_function_stops_loading_with_its_name(tmp_path: Path, case: str) -> None:
    functions, words = FUNCTION_ERRORS[case]
    with pytest.raises(RuleLoadError) as err:
        load_rules(_rules(tmp_path, {**RULE, "when": "true"}, functions))
    assert str(err.value).startswith(words)


def test_a_call_with_the_wrong_number_of_arguments_names_the_rule(tmp_path: Path) -> None:
    functions = {"twice": {"description": "x", "params": ["p"], "expr": "p * 2"}}
    with pytest.raises(RuleLoadError) as err:
        load_rules(_rules(tmp_path, {**RULE, "when": "twice(1, 2) == 2"}, functions))
    assert str(err.value) == (
        "controller-crash/oom-killed.yaml: when: invalid CEL: twice() takes 1 argument(s), not 2"
    )


def test_every_shared_function_is_shared_by_shipped_rules() -> None:
    # A function lives in _functions.yaml because several rules call it (directly, or
    # through another function); what one rule alone needs is that rule's `let`.
    root = default_rules_dir()
    defined = load_functions(root)
    calls = {
        name: cel.compile(f.source, FUNCTIONS, defined).functions & defined.keys()
        for name, f in defined.items()
    }
    callers: dict[str, set[str]] = {name: set() for name in defined}
    for rule in load_rules(root):
        exprs = [rule.when, *rule.evidence, *rule.vars.values(), *rule.lets.values()]
        exprs += [e for where in rule.where.values() for _, e in where]
        todo = {name for e in exprs for name in e.program.functions if name in defined}
        while todo:
            name = todo.pop()
            callers[name].add(rule.id)
            todo |= calls[name] - {n for n, c in callers.items() if rule.id in c}
    assert {n: sorted(c) for n, c in callers.items() if len(c) < 2} == {}
