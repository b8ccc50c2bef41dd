"""Server-side printing: meta.k8s.io/v1 Tables, so the real kubectl prints what it prints
against a real cluster. Built-in types print with the API server's printers (rows.py); custom
resources with the CRD table convertor (additionalPrinterColumns)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .jsonpath import jsonpath_first
from .rows import AGE_DOC, NAME, PRINTERS, Obj, Printer, Row, column_def, get_in, pod_conditions
from .times import human_duration, parse_time
from .types import BUILTIN_TYPES, ResourceType


def _go_text(value: Any) -> str:
    """How kubectl's JSONPath printer renders a value: scalars plainly, the rest as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _cell_for(col_type: str, value: Any, now: datetime) -> Any:
    """cellForJSONValue of the CRD table convertor."""
    if value is None:
        return None
    if col_type == "string":
        return _go_text(value)
    if col_type == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if col_type == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if col_type == "boolean" and isinstance(value, bool):
        return value
    if col_type == "date" and isinstance(value, str):
        when = parse_time(value)
        return "<invalid>" if when is None else human_duration((now - when).total_seconds())
    return None


DEFAULT_CRD_COLUMNS = (
    {
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
        "description": AGE_DOC,
    },
)


def _crd_printer(rtype: ResourceType) -> Printer:
    # Like the apiextensions server: NAME, then the declared columns; with none, an Age column.
    declared = rtype.printer_columns or DEFAULT_CRD_COLUMNS
    defs = [NAME] + [
        {
            "name": c.get("name", ""),
            "type": c.get("type", "string"),
            "format": c.get("format", ""),
            "description": c.get("description", ""),
            "priority": int(c.get("priority", 0)),
        }
        for c in declared
    ]

    def row(obj: Obj, now: datetime) -> Row:
        cells: Row = [get_in(obj, "metadata", "name")]
        for c in declared:
            found, value = jsonpath_first(obj, str(c.get("jsonPath", "")))
            cells.append(_cell_for(str(c.get("type", "string")), value if found else None, now))
        return cells

    return defs, row


def _default_printer() -> Printer:
    # rest.NewDefaultTableConvertor: what types without a printer (CRDs themselves) show.
    defs = [NAME, column_def("Created At", "date", desc=AGE_DOC)]

    def row(obj: Obj, now: datetime) -> Row:
        when = parse_time(get_in(obj, "metadata", "creationTimestamp"))
        created = when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if when else None
        return [get_in(obj, "metadata", "name"), created]

    return defs, row


def printer_for(rtype: ResourceType) -> Printer:
    if rtype.key in PRINTERS:
        return PRINTERS[rtype.key]
    if rtype.printer_columns or rtype.group not in _BUILTIN_GROUPS:
        return _crd_printer(rtype)
    return _default_printer()


_BUILTIN_GROUPS = {t.group for t in BUILTIN_TYPES}


# --- the Table -------------------------------------------------------------------------------


def partial_metadata(obj: Obj, api_version: str = "meta.k8s.io/v1") -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": api_version,
        "metadata": obj.get("metadata", {}),
    }


def build_table(
    rtype: ResourceType,
    objects: list[Obj],
    *,
    include_object: str = "Metadata",
    list_meta: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    api_version: str = "meta.k8s.io/v1",
) -> dict[str, Any]:
    """A meta.k8s.io Table for objects of one type (a list, or one object for a get)."""
    now = now or datetime.now(timezone.utc)
    defs, row_fn = printer_for(rtype)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": row_fn(obj, now)}
        if rtype.key == ("", "pods") and (conds := pod_conditions(obj)):
            row["conditions"] = conds
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial_metadata(obj, api_version)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": dict(list_meta or {}),
        "columnDefinitions": [dict(c) for c in defs],
        "rows": rows,
    }
