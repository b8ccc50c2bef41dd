"""What an Event says happened, read one way in both shapes its recorders write."""

from __future__ import annotations

from typing import Any

import pytest

from k8s.events import Occurrence, count, events_v1_to_core, last_time

OLD = {"count": 4, "firstTimestamp": "t-first", "lastTimestamp": "t-last", "eventTime": None}
NEW = {
    "count": None,
    "firstTimestamp": None,
    "lastTimestamp": None,
    "eventTime": "t-event",
    "series": {"count": 7, "lastObservedTime": "t-series"},
}


@pytest.mark.parametrize(
    ("event", "when"),
    [
        (OLD, "t-last"),
        (NEW, "t-series"),
        ({**NEW, "series": None}, "t-event"),  # written once through events.k8s.io
        # kubectl events puts a series' last observation before lastTimestamp.
        ({**OLD, "series": {"lastObservedTime": "t-series"}}, "t-series"),
        ({"firstTimestamp": "t-first", "metadata": {"creationTimestamp": "t-stored"}}, "t-first"),
        ({"metadata": {"creationTimestamp": "t-stored"}}, "t-stored"),
        ({"lastTimestamp": 7, "series": "none"}, ""),  # not times: unknown
        ({}, ""),
        ("not an event", ""),
    ],
)
def test_last_time(event: Any, when: str) -> None:
    assert last_time(event) == when


@pytest.mark.parametrize(
    ("event", "times"),
    [(OLD, 4), (NEW, 7), ({"count": 0, "series": None}, 1), ({"count": "3"}, 1), ({}, 1)],
)
def test_count(event: Any, times: int) -> None:
    assert count(event) == times


def test_an_events_k8s_io_event_says_what_its_core_view_says() -> None:
    v1 = {
        "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "Pod", "namespace": "ns", "name": "p"},
        "reason": "FailedScheduling",
        "note": "0/3 nodes are available",
        "type": "Warning",
        "reportingController": "default-scheduler",
        "eventTime": "2026-11-30T10:00:00.000001Z",
        "series": {"count": 6, "lastObservedTime": "2026-11-30T10:09:00.123456789Z"},
    }
    occ = Occurrence.of(events_v1_to_core(v1))
    assert (occ.type, occ.reason, occ.message, occ.regarding, occ.count) == (
        "Warning",
        "FailedScheduling",
        "0/3 nodes are available",
        ("Pod", "ns", "p"),
        6,
    )
    assert occ.first == "2026-11-30T10:00:00.000001Z"
    assert occ.last == "2026-11-30T10:09:00.123456789Z"
    assert occ.at is not None and occ.at.microsecond == 123456
