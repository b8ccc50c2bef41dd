"""The subset of kubectl's JSONPath that CRD printer columns and custom columns use."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_JSONPATH_STEP = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_\-$]+)
      | \[(?P<index>-?\d+)\]
      | \[['"](?P<key>[^'"]+)['"]\]
      | \[\?\(@\.(?P<fpath>[A-Za-z0-9_.\-]+)\s*==\s*['"](?P<fval>[^'"]*)['"]\)\]
      | \[\*\]
    """,
    re.VERBOSE,
)


def jsonpath_first(obj: Any, path: str) -> tuple[bool, Any]:
    """Evaluate the simple JSONPaths CRD printer columns use; (found, first value).

    Supports `.a.b`, `[0]`, `['key']`, `[*]` and `[?(@.type=="Ready")]`, with or without the
    surrounding `{}`.
    """
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    values = [obj]
    pos = 0
    while pos < len(text):
        m = _JSONPATH_STEP.match(text, pos)
        if m is None:
            return False, None
        pos = m.end()
        values = [v for cur in values for v in _step(cur, m)]
        if not values:
            return False, None
    return True, values[0]


def _step(cur: Any, m: re.Match[str]) -> list[Any]:
    if m.group("field") is not None or m.group("key") is not None:
        name = m.group("field") or m.group("key")
        return [cur[name]] if isinstance(cur, Mapping) and name in cur else []
    if m.group("index") is not None:
        i = int(m.group("index"))
        return [cur[i]] if isinstance(cur, list) and -len(cur) <= i < len(cur) else []
    if m.group("fpath") is not None:
        want = m.group("fval")
        items = cur if isinstance(cur, list) else []
        return [it for it in items if jsonpath_first(it, "." + m.group("fpath")) == (True, want)]
    if isinstance(cur, list):  # [*]
        return list(cur)
    return list(cur.values()) if isinstance(cur, Mapping) else []
