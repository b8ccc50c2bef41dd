"""Geometry for the HTML report's inline SVG pictures, from the report's views.

Layout only: what is drawn comes from `report["views"]` (the data in the JSON report); this
module turns it into percentages and coordinates, rounded so the output is byte-stable.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

TIMELINE_WIDTH = 1000
LABEL_WIDTH = 190
LANE_HEIGHT = 26
MAX_LANES = 12
AXIS_HEIGHT = 34


def _pct(part: float | None, whole: float | None) -> float | None:
    if part is None or not whole:
        return None
    return round(min(max(part / whole * 100, 0.0), 100.0), 1)


def capacity_bars(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pool/node row with the available share of its TFLOPS and VRAM, in percent; none
    for a node whose numbers are unknown (they would be stale)."""
    return [
        {
            **row,
            "tflops_pct": None
            if row["unknown"]
            else _pct(row["tflops"]["available"], row["tflops"]["total"]),
            "vram_pct": None
            if row["unknown"]
            else _pct(row["vram"]["available"], row["vram"]["total"]),
        }
        for row in rows
    ]


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def timeline(warnings: dict[str, Any]) -> dict[str, Any] | None:
    """Lanes by reason (the busiest first, the rest in one lane), a dot per event."""
    events = [e for e in warnings["events"] if e["epoch"] is not None]
    if not events or warnings["start"] is None or warnings["end"] is None:
        return None
    start, end = warnings["start"], warnings["end"]
    span = max(end - start, 1)
    per_reason: dict[str, int] = {}
    for e in events:
        per_reason[e["reason"]] = per_reason.get(e["reason"], 0) + 1
    reasons = sorted(per_reason, key=lambda r: (-per_reason[r], r))
    if len(reasons) > MAX_LANES:
        reasons = [*reasons[: MAX_LANES - 1], "…"]
    lane_of = {r: i for i, r in enumerate(reasons)}
    plot = TIMELINE_WIDTH - LABEL_WIDTH - 20
    points = []
    for e in events:
        lane = lane_of.get(e["reason"], len(reasons) - 1)
        x = LABEL_WIDTH + 10 + (e["epoch"] - start) / span * plot
        first = e["first_epoch"] if e["first_epoch"] is not None else e["epoch"]
        x1 = LABEL_WIDTH + 10 + (min(first, e["epoch"]) - start) / span * plot
        radius = 4 + min(e["count"], 50) ** 0.5
        points.append(
            {
                "x": round(x, 1),
                "x1": round(x1, 1),
                "y": lane * LANE_HEIGHT + LANE_HEIGHT // 2 + 6,
                "r": round(radius, 1),
                "event": e,
            }
        )
    height = len(reasons) * LANE_HEIGHT + AXIS_HEIGHT
    return {
        "width": TIMELINE_WIDTH,
        "height": height,
        "label_width": LABEL_WIDTH,
        "axis_y": len(reasons) * LANE_HEIGHT + 8,
        "lanes": [
            {"reason": r, "y": i * LANE_HEIGHT + LANE_HEIGHT // 2 + 10}
            for i, r in enumerate(reasons)
        ],
        "points": points,
        "start": _iso(start),
        "end": _iso(end),
    }
