"""The reader answers selectors exactly as an independent scan of the same objects does, and
finds the Events about an object."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from bundlekit import make_bundle

from analyzer.bundle import Bundle
from k8s.selectors import parse_field_selector, parse_label_selector

NAMESPACES = ("team-a", "team-b", "tensor-fusion-sys")
COMPONENTS = ("hypervisor", "operator", "worker", None)
PHASES = ("Running", "Pending", "Failed", None)


def _pods(n: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    pods = []
    for i in range(n):
        labels = {}
        component = rng.choice(COMPONENTS)
        if component:
            labels["tensor-fusion.ai/component"] = component
        if rng.random() < 0.5:
            labels["tensor-fusion.ai/enabled"] = rng.choice(("true", "false"))
        if rng.random() < 0.3:
            labels["app"] = f"app-{rng.randrange(4)}"
        status = {"phase": rng.choice(PHASES)} if rng.random() < 0.9 else {}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"pod-{i:03d}",
                    "namespace": rng.choice(NAMESPACES),
                    "labels": labels,
                },
                "spec": {"nodeName": rng.choice(("", "node-1", "node-2"))},
                "status": status,
            }
        )
    return pods


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundle, list[dict[str, Any]]]:
    pods = _pods(300)
    path = make_bundle(tmp_path_factory.mktemp("idx") / "b.tar.zst", {("", "pods"): pods})
    return Bundle.open(path), pods


def _scan(
    pods: list[dict[str, Any]], namespace: str | None, labels: str | None, fields: str | None
) -> list[str]:
    lsel, fsel = parse_label_selector(labels), parse_field_selector(fields)
    found = [
        p
        for p in pods
        if (namespace is None or p["metadata"].get("namespace") == namespace)
        and lsel.matches(p["metadata"].get("labels") or {})
        and fsel.matches(p)
    ]
    return sorted(f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in found)


LABELS = (
    None,
    "tensor-fusion.ai/component=hypervisor",
    "tensor-fusion.ai/component==operator",
    "tensor-fusion.ai/component!=worker",
    "tensor-fusion.ai/component in (hypervisor,worker)",
    "tensor-fusion.ai/component notin (hypervisor)",
    "tensor-fusion.ai/enabled=true,!tensor-fusion.ai/component",
    "!tensor-fusion.ai/enabled,!tensor-fusion.ai/component,!app",
    "app,tensor-fusion.ai/enabled=true",
    "app in (app-1,app-3),tensor-fusion.ai/component=worker",
    "tensor-fusion.ai/component=nothing-has-this",
)
FIELDS = (
    None,
    "status.phase=Pending",
    "status.phase!=Running",
    "status.phase=",
    "spec.nodeName=node-1,status.phase=Running",
    "metadata.name=pod-042",
)


@pytest.mark.parametrize("namespace", (None, *NAMESPACES, "absent"))
@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("fields", FIELDS)
def test_selectors_answer_like_a_scan(
    indexed: tuple[Bundle, list[dict[str, Any]]],
    namespace: str | None,
    labels: str | None,
    fields: str | None,
) -> None:
    bundle, pods = indexed
    got = bundle.objects("pods", namespace=namespace, labels=labels, fields=fields)
    refs = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in got]
    assert refs == _scan(pods, namespace, labels, fields)  # same set, in (namespace, name) order


def test_an_answer_cannot_be_changed_by_its_caller(
    indexed: tuple[Bundle, list[dict[str, Any]]],
) -> None:
    bundle, _ = indexed
    first = bundle.objects("pods", labels="tensor-fusion.ai/component=hypervisor")
    first.clear()
    assert bundle.objects("pods", labels="tensor-fusion.ai/component=hypervisor")


def test_unknown_resource_is_empty(indexed: tuple[Bundle, list[dict[str, Any]]]) -> None:
    bundle, _ = indexed
    assert bundle.objects("gpus", group="tensor-fusion.ai", labels="a=b") == []


def test_events_are_indexed_by_involved_object_and_sorted_by_time(tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}

    def event(name: str, when: str, target: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "namespace": "ns", "name": target},
            "lastTimestamp": when,
            "reason": name,
        }

    events = [
        event("late", "2026-11-30T10:05:00Z", "p"),
        event("early", "2026-11-30T10:01:00Z", "p"),
        event("other", "2026-11-30T10:00:00Z", "q"),
    ]
    path = make_bundle(tmp_path / "b.tar.zst", {("", "pods"): [pod], ("", "events"): events})
    bundle = Bundle.open(path)
    assert [e["reason"] for e in bundle.events_for(pod)] == ["early", "late"]
    assert bundle.coverage("events", namespace="ns").ok
    assert not bundle.coverage("nodes").ok


def test_events_of_both_api_groups_are_read_once_in_the_core_shape(tmp_path: Path) -> None:
    """An events.k8s.io Event reads like a core/v1 one (note as message, regarding as
    involvedObject); one served in both groups counts once, as its core/v1 copy; a series is
    placed by when it last happened, as `kubectl events` orders them."""
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    about = {"kind": "Pod", "namespace": "ns", "name": "p"}
    series = {
        "metadata": {"name": "series", "namespace": "ns"},
        "regarding": about,
        "reason": "FailedScheduling",
        "note": "0/3 nodes are available",
        "type": "Warning",
        "eventTime": "2026-11-30T10:00:00.000001Z",
        "series": {"count": 6, "lastObservedTime": "2026-11-30T10:09:00.000001Z"},
    }
    once = {
        "metadata": {"name": "once", "namespace": "ns"},
        "involvedObject": about,
        "reason": "GangSchedulingTimeout",
        "message": "timed out",
        "type": "Warning",
        "count": 1,
        "lastTimestamp": "2026-11-30T10:05:00Z",
    }
    twice = {**series, "metadata": {"name": "once", "namespace": "ns"}, "note": "v1 copy"}
    path = make_bundle(
        tmp_path / "b.tar.zst",
        {("", "pods"): [pod], ("", "events"): [once], ("events.k8s.io", "events"): [series, twice]},
    )
    bundle = Bundle.open(path)
    found = bundle.events_for(pod)
    assert [(e["reason"], e["message"]) for e in found] == [
        ("GangSchedulingTimeout", "timed out"),
        ("FailedScheduling", "0/3 nodes are available"),
    ]
    assert found[1]["involvedObject"] == about
    occurrence = bundle.events()[1]
    assert (occurrence.count, occurrence.first, occurrence.last) == (
        6,
        "2026-11-30T10:00:00.000001Z",
        "2026-11-30T10:09:00.000001Z",
    )
    assert occurrence.regarding == ("Pod", "ns", "p")
