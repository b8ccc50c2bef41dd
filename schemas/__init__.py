"""The bundle contract: JSON Schemas shared by the collector and the analyzer.

Installed as the package ``tf_support_schemas``; the schema files sit beside this module.
Every schema declares JSON Schema Draft 2020-12 and is checked by jsonschema's validator for
that draft, formats included (`date-time` through rfc3339-validator).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

FORMAT_VERSION = 1
# The release of tf-collect and tf-analyze (the package's version, read from here by the build).
TOOL_VERSION = "0.1.0"


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``<name>.schema.json`` as a dict (``manifest``, ``rule``, ``report``)."""
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator of schema `name`, built once per process."""
    # jsonschema loads when a schema is first checked: redaction (the token table) starts
    # without it.
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(load(name), format_checker=FormatChecker())


def first_error(name: str, instance: Any) -> str | None:
    """The most telling violation of schema `name` (jsonschema's `best_match`), in one line:
    ``<json path>: <message>``; None when valid."""
    from jsonschema.exceptions import best_match

    error = best_match(validator(name).iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {_short(error.message)}"


def _short(message: str, keep: int = 100) -> str:
    # A message quotes the offending value whole (a list of thousands of artifacts): keep its
    # start and the verdict at its end.
    message = message.replace("\n", "\\n")
    return message if len(message) <= 2 * keep else f"{message[:keep]} ... {message[-keep:]}"


def artifact_summary(art: dict[str, Any]) -> str:
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
