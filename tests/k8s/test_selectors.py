"""Label and field selectors: syntax and matching, table-driven."""

from __future__ import annotations

import pytest

from k8s.selectors import (
    SelectorError,
    label_selector_from_dict,
    parse_field_selector,
    parse_label_selector,
    supported_fields,
)

LABELS = {"app": "llm", "tier": "gpu", "tensor-fusion.ai/component": "operator", "rank": "7"}

LABEL_CASES = [
    # (selector, matches LABELS)
    ("", True),
    ("app=llm", True),
    ("app==llm", True),
    ("app = llm", True),
    ("app=web", False),
    ("app!=web", True),
    ("missing!=x", True),  # != also matches when the label is absent
    ("app!=llm", False),
    ("tier in (gpu,cpu)", True),
    ("tier in (cpu)", False),
    ("tier notin (cpu, tpu)", True),
    ("missing notin (x)", True),
    ("tier notin (gpu)", False),
    ("app", True),
    ("missing", False),
    ("!missing", True),
    ("!app", False),
    ("tensor-fusion.ai/component=operator", True),
    ("tensor-fusion.ai/component=operator,app=llm,!legacy", True),
    ("tensor-fusion.ai/component=operator,app=web", False),
    ("rank>5", True),
    ("rank<5", False),
    ("app>5", False),  # not an integer label: never matches
    ("missing=", False),
    ("app in (llm),tier", True),
]


@pytest.mark.parametrize(("selector", "expected"), LABEL_CASES)
def test_label_selector_matches(selector: str, expected: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is expected


def test_empty_value_selects_empty_label() -> None:
    assert parse_label_selector("role=").matches({"role": ""})
    assert parse_label_selector("role in ()").matches({"role": ""})
    assert not parse_label_selector("role=").matches({})


INVALID_LABELS = [
    ("app=", None),  # valid, see above; kept out below
    ("=llm", "expected a label key"),
    ("app in gpu", "expected '(' to open the value set"),
    ("app in (gpu", "unexpected end of selector"),
    ("app in (gpu cpu)", "expected ',' or ')'"),
    ("app llm", "expected an operator"),
    ("app=llm,", "expected a requirement after ','"),
    ("app=llm tier=gpu", "expected ',' between requirements"),
    ("app=a b", "expected ',' between requirements"),
    ("-bad=x", "invalid label key '-bad'"),
    ("Upper.Case/x=y", "prefix must be a DNS subdomain"),
    ("/x=y", "prefix part must be non-empty"),
    ("app=-x", "invalid label value '-x'"),
    ("rank>x", "'>' needs an integer value"),
    ("a" * 64 + "=x", "name part must be 1-63"),
]


@pytest.mark.parametrize(("selector", "message"), [c for c in INVALID_LABELS if c[1]])
def test_label_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_label_selector(selector)


def test_selector_error_is_a_value_error() -> None:
    assert issubclass(SelectorError, ValueError)


def test_label_selector_string_is_canonical() -> None:
    sel = parse_label_selector("tier in (gpu,cpu), app=llm, !old, rank>3")
    assert str(sel) == "app=llm,!old,rank>3,tier in (cpu,gpu)"
    assert parse_label_selector(str(sel)) == sel


@pytest.mark.parametrize(
    ("selector", "labels", "expected", "text"),
    [
        (None, {"x": "y"}, True, ""),
        ({}, {}, True, ""),
        (
            {"matchLabels": {"tensor-fusion.ai/component": "operator"}},
            LABELS,
            True,
            "tensor-fusion.ai/component=operator",
        ),
        (
            {
                "matchLabels": {"app": "llm"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["gpu", "cpu"]},
                    {"key": "legacy", "operator": "DoesNotExist"},
                ],
            },
            LABELS,
            True,
            "app=llm,!legacy,tier in (cpu,gpu)",
        ),
        (
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]},
            LABELS,
            False,
            "tier notin (gpu)",
        ),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, LABELS, True, "app"),
    ],
)
def test_label_selector_from_dict(
    selector: dict | None, labels: dict, expected: bool, text: str
) -> None:
    sel = label_selector_from_dict(selector)
    assert sel.matches(labels) is expected
    assert str(sel) == text


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
    ],
)
def test_label_selector_from_dict_errors(selector: dict) -> None:
    with pytest.raises(SelectorError):
        label_selector_from_dict(selector)


POD = {
    "metadata": {"name": "train-0", "namespace": "ml"},
    "spec": {
        "nodeName": "gpu-node-1",
        "schedulerName": "tensor-fusion-scheduler",
        "hostNetwork": True,
    },
    "status": {"phase": "Pending"},
}
EVENT = {
    "metadata": {"name": "train-0.1", "namespace": "ml"},
    "involvedObject": {
        "kind": "Pod",
        "name": "train-0",
        "namespace": "ml",
        "uid": "u-1",
        "apiVersion": "v1",
        "fieldPath": "spec.containers{trainer}",
    },
    "reason": "FailedScheduling",
    "type": "Warning",
    "source": {"component": "tensor-fusion-scheduler"},
}

FIELD_CASES = [
    (POD, "", True),
    (POD, "metadata.name=train-0", True),
    (POD, "metadata.name==train-0", True),
    (POD, "metadata.name!=train-0", False),
    (POD, "metadata.namespace=ml,status.phase=Pending", True),
    (POD, "status.phase=Running", False),
    (POD, "status.phase!=Running", True),
    (POD, "spec.nodeName=gpu-node-1,spec.schedulerName=tensor-fusion-scheduler", True),
    (POD, "spec.nodeName=", False),
    ({"metadata": {"name": "p"}}, "spec.nodeName=", True),  # absent compares as ""
    (POD, "spec.hostNetwork=true", True),
    (EVENT, "involvedObject.kind=Pod,involvedObject.name=train-0", True),
    (
        EVENT,
        "involvedObject.namespace=ml,involvedObject.uid=u-1,involvedObject.apiVersion=v1",
        True,
    ),
    (EVENT, r"involvedObject.fieldPath=spec.containers{trainer}", True),
    (EVENT, "reason=FailedScheduling,type=Warning", True),
    (EVENT, "type=Normal", False),
    ({"metadata": {"name": "a,b=c"}}, r"metadata.name=a\,b\=c", True),
]


@pytest.mark.parametrize(("obj", "selector", "expected"), FIELD_CASES)
def test_field_selector_matches(obj: dict, selector: str, expected: bool) -> None:
    assert parse_field_selector(selector).matches(obj) is expected


def test_field_selector_paths_map_names() -> None:
    paths = supported_fields("", "events")
    assert parse_field_selector("source=tensor-fusion-scheduler").matches(EVENT, paths)
    v1_event = {"regarding": {"name": "train-0"}, "reportingController": "kubelet"}
    v1_paths = supported_fields("events.k8s.io", "events")
    assert parse_field_selector("involvedObject.name=train-0").matches(v1_event, v1_paths)
    assert parse_field_selector("regarding.name=train-0").matches(v1_event, v1_paths)
    assert parse_field_selector("reportingComponent=kubelet").matches(v1_event, v1_paths)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("status.phase", "invalid selector: 'status.phase'; can't understand 'status.phase'"),
        ("=Running", "empty field name"),
        (r"metadata.name=a\x", "invalid escape sequence"),
        ("metadata.name=a=b", "unescaped '='"),
    ],
)
def test_field_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError, match=message.replace("(", r"\(")):
        parse_field_selector(selector)


def test_field_selector_supported_fields() -> None:
    sel = parse_field_selector("status.phase=Running,spec.nodeName=n1")
    assert sel.fields == ("status.phase", "spec.nodeName")
    sel.check_supported(supported_fields("", "pods"))
    with pytest.raises(SelectorError, match=r"^field label not supported: status\.phase$"):
        sel.check_supported(supported_fields("apps", "deployments"))
    for field in (
        "involvedObject.kind",
        "involvedObject.name",
        "involvedObject.namespace",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.fieldPath",
        "reason",
        "type",
        "metadata.name",
        "metadata.namespace",
    ):
        assert field in supported_fields("", "events")
    assert str(parse_field_selector(r"metadata.name!=a\,b")) == r"metadata.name!=a\,b"
