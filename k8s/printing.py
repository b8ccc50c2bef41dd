"""Client-side printing like kubectl's: tables and custom columns as text.

The emulator's server-side printers (`emulator.tables`) give the cells a real API server would
send; this module does what kubectl then does with them (column filtering for `-o wide`,
`kind.group/name` when several kinds are printed, Go's `fmt.Sprint` of values, `text/tabwriter`
alignment), so a report shows the manual's baseline commands as the user would have seen them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from .jsonpath import jsonpath_first
from .tables import build_table
from .types import ResourceType

# kubectl's printers.GetNewTabWriter: minwidth 6, padding 3, padchar ' '.
_MIN_WIDTH = 6
_PADDING = 3
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PLAIN_PATH = re.compile(r"^(\.[A-Za-z0-9_-]+)+$")


def escape_terminal(text: str) -> str:
    """printers.EscapeTerminal: control characters shown, never interpreted."""
    return _CONTROL.sub(lambda m: "^" + chr(ord(m.group(0)) ^ 0x40), text)


def go_sprint(value: Any) -> str:
    """fmt.Sprint of a value decoded from JSON, as kubectl prints it in a custom column."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value))
        return f"map[{inner}]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    return str(value)


def table_cell(value: Any) -> str:
    """One cell of a server-side Table as kubectl prints it (nil prints nothing)."""
    if value is None:
        return ""
    if isinstance(value, str):
        cut = min((i for i in (value.find(c) for c in "\f\n\r") if i >= 0), default=-1)
        return escape_terminal(value if cut < 0 else value[:cut] + "...")
    return escape_terminal(go_sprint(value))


def tabwrite(lines: Sequence[Sequence[str]]) -> str:
    """text/tabwriter over tab-separated cells: every cell but a line's last one is padded."""
    widths: list[int] = []
    for cells in lines:
        for i, cell in enumerate(cells[:-1]):
            width = max(len(cell) + _PADDING, _MIN_WIDTH)
            if i == len(widths):
                widths.append(width)
            else:
                widths[i] = max(widths[i], width)
    out = []
    for cells in lines:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])]
        out.append("".join(padded) + (cells[-1] if cells else ""))
    return "\n".join(out)


def get_table(
    rtype: ResourceType,
    objects: list[dict[str, Any]],
    *,
    now: datetime,
    wide: bool = False,
    with_kind: bool = False,
) -> dict[str, Any]:
    """`kubectl get` of one resource type: the column headers and the printed cells."""
    table = build_table(rtype, objects, include_object="None", now=now)
    keep = [i for i, c in enumerate(table["columnDefinitions"]) if wide or not c["priority"]]
    columns = [str(table["columnDefinitions"][i]["name"]).upper() for i in keep]
    prefix = ""
    if with_kind:
        gk = f"{rtype.kind}.{rtype.group}" if rtype.group else rtype.kind
        prefix = gk.lower() + "/"
    rows = []
    for row in table["rows"]:
        cells = [table_cell(row["cells"][i]) for i in keep]
        if cells and prefix:
            cells[0] = prefix + cells[0]
        rows.append(cells)
    return {
        "resource": f"{rtype.resource}.{rtype.group}".rstrip("."),
        "columns": columns,
        "rows": rows,
    }


def custom_columns(
    spec: Sequence[tuple[str, str]], objects: list[dict[str, Any]]
) -> dict[str, Any]:
    """`kubectl get -o custom-columns=NAME:.path,...` of the objects."""
    getters = [_getter(path) for _, path in spec]
    rows = []
    for obj in objects:
        cells = []
        for get in getters:
            found, value = get(obj)
            cells.append("<none>" if not found else escape_terminal(go_sprint(value)))
        rows.append(cells)
    return {"columns": [name for name, _ in spec], "rows": rows}


def _getter(path: str) -> Callable[[Any], tuple[bool, Any]]:
    """A plain `.a.b.c` path walked directly; anything else through the JSONPath subset."""
    if not _PLAIN_PATH.match(path):
        return lambda obj: jsonpath_first(obj, path)
    keys = path.split(".")[1:]

    def get(obj: Any) -> tuple[bool, Any]:
        for key in keys:
            if not isinstance(obj, dict) or key not in obj:
                return False, None
            obj = obj[key]
        return True, obj

    return get


def table_text(table: dict[str, Any]) -> str:
    return tabwrite([table["columns"], *table["rows"]])
