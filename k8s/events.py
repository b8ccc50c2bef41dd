"""The two views the API serves of one Event: core/v1 and events.k8s.io/v1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


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
