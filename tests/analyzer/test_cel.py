"""The CEL evaluator: values and errors as the CEL specification gives them, the same answers
as an independent CEL implementation on generated expressions, and limits for user rules."""

from __future__ import annotations

import math
import os
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.rules import cel
from analyzer.rules.functions import FUNCTIONS

POD = {
    "metadata": {"name": "p", "namespace": "ml", "labels": {"app": "x"}},
    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nvcr.io/a:1"}]},
    "status": {"phase": "Pending", "containerStatuses": []},
}
# Shapes the host functions must answer for without a traceback.
ODD = {"metadata": {"labels": {"n": 5}, "annotations": ["x"]}, "a": None, "l": [{"b": 1}]}
VARS = {"pod": POD, "x": 3, "y": 2.5, "s": "abc", "none": None, "xs": [1, 2, 3], "odd": ODD}


def run(source: str, **extra: Any) -> Any:
    return cel.compile(source, FUNCTIONS).run({**VARS, **extra})


VALUES = [
    # literals and strings
    ('"a\\tb"', "a\tb"),
    ("r'\\d+'", "\\d+"),
    ("'''two\nlines'''", "two\nlines"),
    ('"\\u00e9\\x41\\101"', "éAA"),
    ("b'\\xff'", b"\xff"),
    ("0x1F + 1", 32),
    ("-9223372036854775808", -(2**63)),
    ("1.5e3", 1500.0),
    # arithmetic: ints truncate toward zero, remainders keep the dividend's sign
    ("7 / 2", 3),
    ("-7 / 2", -3),
    ("-7 % 3", -1),
    ("1.0 / 0.0", math.inf),
    ('"ab" + "c"', "abc"),
    ("[1] + [2, 3]", [1, 2, 3]),
    # heterogeneous equality and ordering across numbers only
    ("1 == 1.0", True),
    ('1 == "1"', False),
    ("true == 1", False),
    ("[1, 2] == [1.0, 2.0]", True),
    ('{"a": [1]} == {"a": [1]}', True),
    ("1 < 1.5", True),
    ('"a" < "b"', True),
    ("1 in [1.0]", True),
    ('"app" in pod.metadata.labels', True),
    ("none == null", True),
    # member access, has(), index
    ("pod.metadata.name", "p"),
    ("has(pod.status.phase)", True),
    ("has(pod.status.reason)", False),
    ("pod.spec.containers[0].image", "nvcr.io/a:1"),
    ('pod["spec"]["nodeName"]', "n1"),
    ("pod.metadata.namespace", "ml"),  # a reserved word is fine as a field name
    # macros
    ("xs.map(v, v * 2)", [2, 4, 6]),
    ("xs.map(v, v > 1, v * 10)", [20, 30]),
    ("xs.filter(v, v % 2 == 1)", [1, 3]),
    ("xs.all(v, v > 0)", True),
    ("xs.exists(v, v == 2)", True),
    ("xs.exists_one(v, v > 1)", False),
    ('{"a": 1, "b": 2}.all(k, k.size() == 1)', True),
    ("[[1, 2], [3]].map(v, v.map(w, w + 1))", [[2, 3], [4]]),
    ("xs.exists(xs, xs == 3)", True),  # the macro variable shadows the outer name
    ("cel.bind(n, xs.size(), n * n + n)", 12),
    ("cel.bind(v, 10, xs.map(v, v + 1) + [v])", [2, 3, 4, 10]),
    ('s in ["x", "abc"] && !(1 in ["1"])', True),
    # errors absorbed where the other side decides, as CEL does
    ("true || 1 / 0 == 1", True),
    ("1 / 0 == 1 || true", True),
    ("false && pod.nope", False),
    ("pod.nope && false", False),
    ("[1, 0].exists(v, 1 / v == 1)", True),
    ("[0, 1].all(v, 1 / v == 2)", False),
    # conversions
    ("string(80.0)", "80"),
    ("string(1e6)", "1000000"),
    ("string(0.1 + 0.2)", "0.30000000000000004"),
    ("string(1e-7)", "0.0000001"),
    ("string(true)", "true"),
    ("int(-2.7)", -2),
    ('int("12")', 12),
    ('double("1.5")', 1.5),
    ('size("héllo")', 5),
    ('"AbC".lowerAscii()', "abc"),
    ('"a,b".split(",")', ["a", "b"]),
    ('["a", "b"].join("-")', "a-b"),
    ('"abc".matches("b")', True),
    ('"abc".matches("^b")', False),
    ('"nvcr.io/a".startsWith("nvcr") && s.endsWith("c") && s.contains("b")', True),
    ("type(1) == type(2)", True),
    # host functions
    ('quantity("80Gi")', 80.0 * 2**30),
    ('dig(pod, "spec.containers.0.name", "")', "c"),
    ('dig(pod, "spec.containers.5.name", "?")', "?"),
    ('label(pod, "app") + annotation(pod, "none")', "x"),
    ('label(odd, "n") + annotation(odd, "x") + label(s, "x") + label(none, "x")', "5"),
    ('dig(pod, "metadata.name.x", "d") + dig(odd, "a.b", "d") + dig(odd, "l.b", "d")', "ddd"),
    # A present-but-null value is absent (events.k8s.io events serve "count": null).
    ('dig(odd, "a", "d") == "d" && dig(odd, "l.0.b", 0) == 1', True),
    ('event_count({"count": null, "series": {"count": 7}}) + event_count({"count": null})', 8),
    ('event_count({"count": 3}) + event_count({"count": 0, "series": null})', 4),
    (
        'event_time({"lastTimestamp": null, "eventTime": "2026-01-02T03:04:05.000000Z"})',
        "2026-01-02T03:04:05.000000Z",
    ),
    (
        'event_time({"lastTimestamp": null, "eventTime": "t0", "series": {"lastObservedTime": "t1"}})'
        ' + event_time({"lastTimestamp": "t2", "eventTime": null}) + event_time({})',
        "t1t2",
    ),
    ('extract("port 8001 busy", "port ([0-9]+)")', "8001"),
    ("max([1.5, 2.5], 0.0) + min([], 1.0)", 3.5),
    # sum: every element, not only a first few (the overcommit rule adds all pods of a card)
    ("sum([1.5, 2.5, 3, 4, 5, 6, 7, 8, 9.5]) + sum([])", 46.5),
    # GPU discovery: selectors parsed as the API server does (k8s/selectors), not split at "="
    ('selects("app=x", pod) && selects("app in (x,y),!gone", pod) && !selects("app=y", pod)', True),
    ('selects("a=b=c", pod) || selects("app=x", odd)', False),  # invalid; odd labels: none
    ('label_keys("b=1,a in (x)") + label_keys("a=b=c")', ["a", "b"]),
    (
        'gpu_node_selector([]) + " " + gpu_node_selector([{"spec": {"containers": [{"env": ['
        '{"name": "INITIAL_GPU_NODE_LABEL_SELECTOR", "value": ""}]}, {"env": ['
        '{"name": "INITIAL_GPU_NODE_LABEL_SELECTOR", "value": "pool=gpu"}]}]}}])',
        "nvidia.com/gpu.present=true pool=gpu",
    ),
    (
        'hypervisor_of(pod, "n1") && hypervisor_of({"metadata": {"name": "tf-hypervisor-n2"}}, "n2")'
        ' && !hypervisor_of({"metadata": {"name": "hypervisor-n2"}}, "")',
        True,
    ),
    (
        'gpu_hints({"status": {"allocatable": {"tensor-fusion.ai/index_0": "1"}}}) &&'
        " !gpu_hints(pod) && !gpu_hints(odd)",
        True,
    ),
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_value(source: str, expected: Any) -> None:
    got = run(source)
    assert got == expected and type(got) is type(expected)


ERRORS = [
    ("1 + 2.0", "no such overload"),
    ('"a" + 1', "no such overload"),
    ("2.0 * 3", "no such overload"),
    ("1 / 0", "division by zero"),
    ("9223372036854775807 + 1", "int overflow"),
    ("pod.nope", "no such key: nope"),
    ("pod.metadata.name.first", "no field 'first' on string"),
    ("xs[3]", "index out of range"),
    ('xs["a"]', "no such overload"),
    ("x.map(v, v)", "cannot iterate over int"),
    ('1 < "a"', "no such overload"),
    ("!1", "no such overload"),
    ("x ? 1 : 2", "no such overload"),
    ("1 / 0 == 1 && true", "division by zero"),
    ("[0, 1].all(v, 1 / v == 1)", "division by zero"),
    ('int(" 12")', "cannot convert"),
    ('int("1.5")', "cannot convert"),
    ("int(1e30)", "out of the int range"),
    ('quantity("lots")', "quantity(): not a quantity"),
    ('sum([1.0, "2"])', "sum(): sum() of a list holding str"),
    ('"x".matches("(")', "invalid regex"),
    ("unknown_name", "undeclared reference"),
    ("{1.5: 1}", "unsupported map key"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_error(source: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=re.escape(message)):
        run(source)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("pod.status +", "expected"),
        ('open("/etc/hostname")', "undeclared function 'open'"),
        ('__import__("os")', "undeclared function '__import__'"),
        ('s.format("x")', "undeclared function 'format'"),
        ("Pod{name: 'x'}", "message construction"),
        ("if", "reserved word"),
        ('"unterminated', "unexpected character"),
        ('"\\q"', "invalid escape"),
        ("9223372036854775808", "out of range"),
        ("(" * 300 + "1" + ")" * 300, "nested deeper"),
        ("1" + " + 1" * 400, "nested deeper than 150"),
        ("!-" * 200 + "true", "nested deeper than 150"),
        ("has(x)", "has()"),
        ("xs.map(1, 2)", "simple name"),
    ],
)
def test_compile_error(source: str, message: str) -> None:
    with pytest.raises((cel.CelSyntaxError, cel.CelCompileError), match=re.escape(message)):
        cel.compile(source, FUNCTIONS)


def test_variables_are_the_free_names_only() -> None:
    program = cel.compile("pod.spec.containers.exists(c, c.name == n) && xs.all(x, x > 0)")
    assert program.variables == {"pod", "n", "xs"}
    assert program.functions == frozenset()  # macros are not function calls
    assert cel.compile("size(s) > 0 && s.contains('a')").functions == {"size", "contains"}


def test_objects_are_read_in_place_not_copied() -> None:
    pods = [POD, {**POD, "metadata": {"name": "q"}}]
    (first,) = cel.compile("pods.filter(p, p.metadata.name == 'p')").run({"pods": pods})
    assert first is POD


class _Uncollected(dict):  # type: ignore[type-arg]
    """Variables whose missing names are data the host could not provide."""

    def __missing__(self, name: str) -> Any:
        raise cel.Unknown(name)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("gone && false", False),
        ("false && gone.field", False),
        ("gone || x == 3", True),
        ("gone && true", cel.Unknown),
        ("gone.field == 1", cel.Unknown),
        ("xs.exists(v, gone)", cel.Unknown),
        ("xs.exists(v, gone || v == 2)", True),
        ('label(gone, "a")', cel.Unknown),
    ],
)
def test_data_not_collected_is_unknown_unless_the_other_side_decides(
    source: str, expected: Any
) -> None:
    program = cel.compile(source, FUNCTIONS)
    if expected is cel.Unknown:
        with pytest.raises(cel.Unknown):
            program.run(_Uncollected(VARS))
    else:
        assert program.run(_Uncollected(VARS)) is expected


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("gone.a == 1 && lost.b == 2 && gone.c == 3", "gone"),
        ("lost.a == 1 && (gone.b == 1 || lost.c == 2) && gone.d", "lost"),
        ("(gone.a == 1 || x == 3) && lost.b == 2 && gone.c", "lost"),  # gone's absorbed first
        ("(gone.a == 1 || x == 3) && gone.c == 2 && lost.d", "gone"),
        ("gone.a == 1 && (gone.b == 1 || x == 3) && lost.c", "gone"),
        ("gone.a == 1 && (x == 3 ? lost.b : false) && gone.c", "gone"),
        ("!(gone.a || lost.b) && gone.c.exists(v, lost.d)", "gone"),
    ],
)
def test_the_first_data_missing_in_order_is_the_one_said(source: str, said: str) -> None:
    # Missing data that an operand decides past is not said; of the rest, the first in order.
    with pytest.raises(cel.Unknown) as err:
        cel.compile(source, FUNCTIONS).run(_Uncollected(VARS))
    assert str(err.value) == said
    decided = cel.compile(source + " && x == 4", FUNCTIONS)
    assert decided.run(_Uncollected(VARS)) is False


def test_deeply_nested_comprehensions_run() -> None:
    source = "xs" + ".exists(v, [v]" * 40 + ".size() == 1" + ")" * 40
    assert cel.compile(source).run(VARS) is True


def test_runaway_expression_stops_at_the_budget() -> None:
    big = cel.compile("xs.map(a, xs.map(b, xs.map(c, a + b + c))).size()")
    with pytest.raises(cel.CelError, match="budget"):
        big.run({"xs": list(range(1000))}, budget=100_000)
    assert big.run({"xs": list(range(10))}) == 10


# ------------------------------------------------------------------ differential testing

# An independent implementation (Rust, via the `common-expression-language` package) must give
# the same answer on generated expressions over the same data.
reference = pytest.importorskip("cel")

DATA = {
    "i": 7,
    "j": -3,
    "d": 2.5,
    "t": "Tensor-Fusion",
    "b": True,
    "xs": [1, 2, 3],
    "m": {"a": 1, "b": "x"},
}
INTS = st.sampled_from(["i", "j", "1", "0", "-4", "xs[0]", "size(xs)", "m.a", "size(t)"])
DOUBLES = st.sampled_from(["d", "0.5", "1e3", "-2.25"])
STRINGS = st.sampled_from(["t", '"ab"', '""', "m.b"])


def _ints(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return INTS
    sub = _ints(depth - 1)
    return st.one_of(
        INTS,
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/", "%"]), sub).map(" ".join),
        st.tuples(_bools(depth - 1), sub, sub).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        sub.map(lambda s: f"(-{s})"),
        st.just("xs.filter(v, v > 1).size()"),
        st.tuples(DOUBLES).map(lambda t: f"int({t[0]})"),
    )


def _bools(depth: int) -> st.SearchStrategy[str]:
    base = st.sampled_from(["b", "true", "false", "has(m.a)", "has(m.z)", "'a' in m", "2 in xs"])
    if depth == 0:
        return base
    sub = _bools(depth - 1)
    nums = st.one_of(_ints(depth - 1), DOUBLES)
    return st.one_of(
        base,
        st.tuples(sub, st.sampled_from(["&&", "||"]), sub).map(lambda t: f"({' '.join(t)})"),
        sub.map(lambda s: f"!{s}"),
        st.tuples(nums, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), nums).map(
            lambda t: f"({' '.join(t)})"
        ),
        st.tuples(STRINGS, st.sampled_from(["contains", "startsWith", "endsWith"]), STRINGS).map(
            lambda t: f"{t[0]}.{t[1]}({t[2]})"
        ),
        st.tuples(st.sampled_from(["exists", "all"]), _ints(depth - 1)).map(
            lambda t: f"xs.{t[0]}(v, v * 2 > {t[1]})"
        ),
        st.tuples(STRINGS, STRINGS).map(lambda t: f"({t[0]} + {t[1]}).size() > 2"),
        _ints(depth - 1).map(lambda s: f"string({s}).size() < 3"),
    )


def _reference(source: str) -> tuple[str, Any]:
    try:
        ctx = reference.Context()
        for name, value in DATA.items():
            ctx.add_variable(name, value)
        return "value", reference.compile(source).execute(ctx)
    except Exception:
        return "error", None


def _ours(source: str) -> tuple[str, Any]:
    try:
        return "value", cel.compile(source).run(DATA)
    except cel.CelError:
        return "error", None


@settings(max_examples=int(os.environ.get("TF_CEL_EXAMPLES", "300")), deadline=None)
@given(st.one_of(_bools(3), _ints(3)))
def test_same_answers_as_an_independent_cel(source: str) -> None:
    assert _ours(source) == _reference(source), source


# The last error line of a run that died, in the formats components and workloads print.
ERROR_LINES = [
    'E1130 09:12:58.402117       1 main.go:312] "unable to set up" err="no such host"',
    "F1130 09:11:53.512911  412093 main.go:89] Failed to start device manager: 999",
    "panic: runtime error: invalid memory address or nil pointer dereference",
    "fatal error: concurrent map writes",
    '{"level":"error","ts":"2026-11-30T09:00:00Z","msg":"Reconciler error","error":"x"}',
    '{"severity":"FATAL","message":"cannot open /dev/nvidia0"}',
    'time="2026-11-30T09:00:00Z" level=fatal msg="failed to load config"',
    "2026-11-30T09:00:00.000Z\tERROR\tsetup\tproblem running manager",
    "2026-11-30 09:08:14,201 ERROR train.py:52 - rank 0 failed",
    "ERROR:root:could not reach the parameter server",
    "[2026-11-30 09:11:01.935] [error] failed to query worker info from hypervisor",
    "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/epoch-12.pt'",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "thread 'main' panicked at src/main.rs:42:5:",
]
NOT_ERROR_LINES = [
    'I1130 09:12:57.601128       1 connect.go:48] "retrying after error" err="timeout"',
    'W1130 09:12:57.601128       1 warnings.go:70] unknown field "spec.x"',
    '{"level":"info","msg":"no error, all good","error_count":0}',
    "2026-11-30 09:08:14,201 INFO train.py:52 - errors: 0",
    '  File "/app/train.py", line 214, in <module>',
    "Traceback (most recent call last):",
    "Epoch 3: loss 0.12, ErrorRate 0.01",
]


def test_error_lines_knows_the_common_log_formats() -> None:
    found = run("error_lines(lines)", lines=ERROR_LINES + NOT_ERROR_LINES)
    assert found == ERROR_LINES


@pytest.mark.parametrize(
    ("start", "end", "minutes"),
    [
        ("2026-11-30T09:52:00Z", "2026-11-30T10:09:41Z", 17),
        ("2026-11-30T23:58:00Z", "2026-12-01T00:03:00Z", 5),  # across a month's end
        ("2026-11-30T09:00:00.123456Z", "2026-11-30T09:06:59Z", 6),  # MicroTime
        ("2026-11-30T10:00:00Z", "2026-11-30T09:00:00Z", -60),
        ("", "2026-11-30T10:00:00Z", -1),  # no time: nothing to compare
        ("2026-11-30T10:00:00Z", "yesterday", -1),
    ],
)
def test_minutes_between_two_kubernetes_times(start: str, end: str, minutes: int) -> None:
    assert run("minutes_between(a, b)", a=start, b=end) == minutes
