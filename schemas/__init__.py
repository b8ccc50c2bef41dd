"""The bundle contract: JSON Schemas shared by the collector and the analyzer.

Installed as the package ``tf_support_schemas``; the schema files sit beside this module.
Input is checked with fastjsonschema, which compiles a schema into one Python function.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema

FORMAT_VERSION = 1
# The release of tf-collect and tf-analyze (the package's version, read from here by the build).
TOOL_VERSION = "0.1.0"


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``<name>.schema.json`` as a dict (``manifest``, ``rule``, ``report``)."""
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def validator(name: str) -> Callable[[Any], Any]:
    return fastjsonschema.compile(load(name), use_default=False)  # check, never fill in


def first_error(name: str, instance: Any) -> str | None:
    """The first violation of schema `name`, as ``<json path>: <message>``; None when valid."""
    try:
        validator(name)(instance)
    except fastjsonschema.JsonSchemaValueException as exc:
        where = "/".join(str(p) for p in exc.path[1:]) or "(root)"  # path[0] is "data"
        message = exc.message.removeprefix(exc.name).strip()
        return f"{where}: {message}"
    return None


def describe_artifact(art: dict[str, Any]) -> str:
    """What a manifest artifact is, in one line, as both tools name it: its kind and target."""
    kind = art.get("type")
    if kind == "log":
        prev = " (previous)" if art.get("previous") else ""
        return f"logs {art.get('namespace')}/{art.get('pod')}/{art.get('container')}{prev}"
    if kind == "exec":
        where = f"{art.get('namespace')}/{art.get('pod')}/{art.get('container')}"
        return f"exec {art.get('check', '')} in {where}"
    if kind in ("helm", "metrics") or not art.get("resource"):
        return str(art["id"])  # helm:<release>, metrics:<...>
    where = f" in {art['namespace']}" if art.get("namespace") else ""
    sel = f" -l {art['label_selector']}" if art.get("label_selector") else ""
    fields = f" --field-selector {art['field_selector']}" if art.get("field_selector") else ""
    group = f".{art['group']}" if art.get("group") else ""
    return f"{art.get('resource')}{group}{where}{sel}{fields}"
