"""Which skipped rules make a verdict inconclusive, and the tf-collect command that fills the
gaps: built from the bundle's own options, so the user re-runs what they ran, plus what helps."""

from __future__ import annotations

from typing import Any

import pytest

from analyzer.bundle import Missing
from analyzer.results import RuleResult
from analyzer.verdict import recollect_command, unsure

TIMED_OUT = Missing.of(
    "collection_failed", what="nodes", status="timeout", detail="no answer within 30s"
)
CUT = Missing.of(
    "collection_failed",
    what="pods",
    status="timeout",
    detail="the overall --timeout was reached before this call",
)
FORBIDDEN = Missing.of(
    "collection_failed", what="gpus.tensor-fusion.ai", status="forbidden", detail="403"
)
NO_CRD = Missing.of(
    "collection_failed", what="gpus.tensor-fusion.ai", status="not_found", detail=""
)
NO_EXEC = Missing.of("check_not_run", check="cuda-libs/ldconfig")
NO_METRICS = Missing.of("document_missing", document="metrics", status="not_collected", detail="")
NO_LOGS = Missing.of("logs_not_collected")


def _skipped(*gaps: tuple[Missing, str]) -> RuleResult:
    return RuleResult("x/rule", ("x/rule",), "error", "x", "skipped", gaps=list(gaps))


def _manifest(**options: Any) -> dict[str, Any]:
    base = {
        "context": "prod",
        "pods": [],
        "workload_namespaces": [],
        "tail_lines": 200,
        "since_seconds": None,
        "timeout_seconds": 30.0,
        "overall_timeout_seconds": None,
        "exec": False,
        "metrics": False,
    }
    return {
        "options": {**base, **options},
        "tensorfusion": {"namespace": "tf-system", "release": "tensor-fusion"},
    }


@pytest.mark.parametrize(
    "gap,matters",
    [(TIMED_OUT, True), (CUT, True), (FORBIDDEN, True), (NO_LOGS, True),
     (NO_CRD, False), (NO_EXEC, False), (NO_METRICS, False)],
)  # fmt: skip
def test_only_gaps_the_user_did_not_choose_make_a_rule_unsure(gap: Missing, matters: bool) -> None:
    assert unsure(_skipped((gap, ""))) is matters
    assert unsure(_skipped((NO_EXEC, "ns/p"), (gap, "ns/p"))) is matters


def test_a_rule_in_error_is_unsure_and_one_that_ran_is_not() -> None:
    assert unsure(RuleResult("x", ("x",), "error", "x", "error", errors=["boom"]))
    assert not unsure(RuleResult("x", ("x",), "error", "x", "passed"))


@pytest.mark.parametrize(
    "options,gaps,command",
    [
        # The overall --timeout ran out: the same command without it.
        ({"overall_timeout_seconds": 2.0}, [(CUT, "")],
         "tf-collect --context prod -n tf-system --release tensor-fusion"),
        # One request timed out: twice the request timeout; a --timeout that sufficed stays.
        ({"overall_timeout_seconds": 600.0}, [(TIMED_OUT, "")],
         "tf-collect --context prod -n tf-system --release tensor-fusion --request-timeout 60 "
         "--timeout 600"),
        # Opt-in data the rules wanted.
        ({}, [(NO_EXEC, "ml/p"), (NO_METRICS, "")],
         "tf-collect --context prod -n tf-system --release tensor-fusion --exec --metrics"),
        # The user's own choices are kept; a pod whose logs nobody took is named.
        ({"pods": ["ml/a"], "tail_lines": 1000, "context": None}, [(NO_LOGS, "ml/b/main")],
         "tf-collect -n tf-system --release tensor-fusion --pod ml/a --pod ml/b --tail 1000"),
    ],
)  # fmt: skip
def test_the_command_collects_what_was_missing(
    options: dict[str, Any], gaps: list[tuple[Missing, str]], command: str
) -> None:
    assert recollect_command(_manifest(**options), [_skipped(*gaps)]) == command


def test_no_command_when_collecting_again_cannot_help() -> None:
    not_collected = Missing.of("not_collected", what="replicasets.apps", namespace="")
    assert recollect_command(_manifest(), [_skipped((NO_CRD, ""), (not_collected, ""))]) is None
    assert recollect_command(_manifest(), []) is None
