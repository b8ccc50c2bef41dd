"""The bundle contract: JSON Schemas shared by the collector and the analyzer.

Installed as the package ``tf_support_schemas``; the schema files sit beside this module.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

FORMAT_VERSION = 1


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``<name>.schema.json`` as a dict (``manifest``, ``rule``, ``report``)."""
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load(name), format_checker=FormatChecker())


def errors(name: str, instance: Any) -> list[str]:
    """Every violation as ``<json path>: <message>``, sorted; empty when valid."""
    found = []
    for err in validator(name).iter_errors(instance):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        found.append(f"{where}: {err.message}")
    return sorted(found)
