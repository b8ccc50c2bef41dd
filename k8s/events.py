"""The two views the API serves of one Event (core/v1 and events.k8s.io/v1), and what an
Event says happened, read one way whichever recorder wrote it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .times import parse_time

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One Event in its core/v1 shape (events.k8s.io ones converted), with what it says:
    its type, reason and message, the object it is about (kind, namespace, name), how many
    times it happened, when first and last (as the API wrote them; "" when unknown), and
    `at`, the last time parsed, by which Events are ordered."""

    event: dict[str, Any]
    type: str
    reason: str
    message: str
    regarding: tuple[str, str, str]
    count: int
    first: str
    last: str
    at: datetime | None

    @classmethod
    def of(cls, ev: dict[str, Any]) -> Occurrence:
        """`ev` must be in the core/v1 shape (see events_v1_to_core)."""
        last = last_time(ev)
        about = ev.get("involvedObject")
        about = about if isinstance(about, dict) else {}
        return cls(
            ev,
            _text(ev.get("type")),
            _text(ev.get("reason")),
            _text(ev.get("message")),
            (_text(about.get("kind")), _text(about.get("namespace")), _text(about.get("name"))),
            count(ev),
            _text(ev.get("firstTimestamp")) or _text(ev.get("eventTime")) or last,
            last,
            parse_time(last),
        )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _field(ev: Any, key: str, inner: str) -> Any:
    found = ev.get(key) if isinstance(ev, dict) else None
    return found.get(inner) if isinstance(found, dict) else None


def last_time(ev: Any) -> str:
    """When a core/v1 Event last happened, by what `kubectl events` sorts on: the last of its
    series (events.k8s.io recorders, whose lastTimestamp is null), lastTimestamp (the old
    recorders), eventTime; then when it first happened, or was stored; "" when none is set."""
    if not isinstance(ev, dict):
        return ""
    return (
        _text(_field(ev, "series", "lastObservedTime"))
        or _text(ev.get("lastTimestamp"))
        or _text(ev.get("eventTime"))
        or _text(ev.get("firstTimestamp"))
        or _text(_field(ev, "metadata", "creationTimestamp"))
    )


def count(ev: Any) -> int:
    """How many times a core/v1 Event happened: its series' count (events.k8s.io recorders,
    whose count is null), its count (the old recorders), else once."""
    for found in (_field(ev, "series", "count"), ev.get("count") if isinstance(ev, dict) else 0):
        if type(found) is int and found > 0:
            return found
    return 1


def events_v1_to_core(ev: Obj) -> dict[str, Any]:
    """An events.k8s.io/v1 Event seen through core/v1 (the API serves both views)."""
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": ev.get("metadata", {}),
        "involvedObject": ev.get("regarding", {}),
        "reason": ev.get("reason", ""),
        "message": ev.get("note", ""),
        "source": ev.get("deprecatedSource", {}),
        "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
        "lastTimestamp": ev.get("deprecatedLastTimestamp"),
        "count": ev.get("deprecatedCount", 0),
        "type": ev.get("type", ""),
        "eventTime": ev.get("eventTime"),
        "reportingComponent": ev.get("reportingController", ""),
        "reportingInstance": ev.get("reportingInstance", ""),
    }
    for key in ("series", "related", "action"):
        if ev.get(key):
            out[key] = ev[key]
    return out


def core_to_events_v1(ev: Obj) -> dict[str, Any]:
    """A core/v1 Event seen through events.k8s.io/v1."""
    source = ev.get("source") or {}
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": ev.get("metadata", {}),
        "eventTime": ev.get("eventTime"),
        "reportingController": ev.get("reportingComponent") or source.get("component", ""),
        "reportingInstance": ev.get("reportingInstance") or source.get("host", ""),
        "reason": ev.get("reason", ""),
        "regarding": ev.get("involvedObject", {}),
        "note": ev.get("message", ""),
        "type": ev.get("type", ""),
        "deprecatedSource": source,
        "deprecatedFirstTimestamp": ev.get("firstTimestamp"),
        "deprecatedLastTimestamp": ev.get("lastTimestamp"),
        "deprecatedCount": ev.get("count", 0),
    }
    for key in ("series", "related", "action"):
        if ev.get(key):
            out[key] = ev[key]
    return out
