"""The bundle contract: JSON Schemas shared by the collector and the analyzer.

Installed as the package ``tf_support_schemas``; the schema files sit beside this module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

FORMAT_VERSION = 1
# The release of tf-collect and tf-analyze (the package's version, read from here by the build):
# a constant, not the installed metadata, which cost a twentieth of a second of every start.
TOOL_VERSION = "0.1.0"


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``<name>.schema.json`` as a dict (``manifest``, ``rule``, ``report``)."""
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def validator(name: str) -> Draft202012Validator:
    # Imported here: most runs never need jsonschema (the quick check below answers), and
    # importing it is a tenth of a second of every tf-analyze start.
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(load(name), format_checker=FormatChecker())


def errors(name: str, instance: Any) -> list[str]:
    """Every violation as ``<json path>: <message>``, sorted; empty when valid."""
    check = _quick_check(name)
    if check is not None and check(instance):
        return []
    found = []
    for err in validator(name).iter_errors(instance):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        found.append(f"{where}: {err.message}")
    return sorted(found)


# ---------------------------------------------------------------------------- quick check
# A manifest lists thousands of artifacts, and jsonschema takes ~0.5 ms for each; a report
# carries the views of 10,000 pods, and every one of ~70 rule files is validated at load. A
# schema that uses only the plain keywords below is also compiled into one predicate that says
# True only where jsonschema finds no error: then `errors` answers [] at once. Anything else
# (a False, a value of a type JSON does not produce, a schema with other keywords) goes to
# jsonschema, whose errors are the answer, so a quick check can cost time, never a verdict.

Check = Callable[[Any], bool]
_JSON = frozenset({dict, list, str, int, float, bool, type(None)})
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_NOTES = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples"}
)


class _Unsupported(Exception):
    pass


@cache
def _quick_check(name: str) -> Check | None:
    schema = load(name)
    try:
        return _Compiler(schema).compile(schema, root=True)
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any, root: bool = False) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False or not isinstance(schema, dict):
            raise _Unsupported
        if not root and "$id" in schema:
            raise _Unsupported
        tests = [self._keyword(key, value, schema) for key, value in schema.items()]
        tests = [t for t in tests if t is not None]

        def check(v: Any) -> bool:
            return type(v) in _JSON and all(test(v) for test in tests)

        return check

    def _keyword(self, key: str, value: Any, schema: dict[str, Any]) -> Check | None:
        if key in _NOTES:
            return None
        if key == "type":
            return _type_test([value] if isinstance(value, str) else value)
        if key in ("const", "enum"):
            allowed = [value] if key == "const" else value
            if not all(type(c) in (str, int, float, bool, type(None)) for c in allowed):
                raise _Unsupported
            return lambda v: any(_same(v, c) for c in allowed)
        if key in _BOUNDS and type(value) in (int, float):
            return _bound(key, value)
        if key in _SIZES and type(value) is int:
            kind, at_least = _SIZES[key]
            return lambda v: (
                type(v) is not kind or (len(v) >= value if at_least else len(v) <= value)
            )
        if key == "uniqueItems" and type(value) is bool:
            return None if not value else _unique_strings
        if key == "oneOf" and isinstance(value, list) and value:
            return self._one_of(value)
        if key == "pattern":
            search = re.compile(value).search
            return lambda v: type(v) is not str or search(v) is not None
        if key == "format":
            if value != "date-time":
                raise _Unsupported
            return _date_time
        if key == "required":
            names = tuple(value)
            return lambda v: type(v) is not dict or all(n in v for n in names)
        if key == "properties":
            return self._object(schema)
        if key == "additionalProperties":
            return None if "properties" in schema else self._object(schema)
        if key == "propertyNames":
            each = self.compile(value)
            return lambda v: type(v) is not dict or all(each(k) for k in v)
        if key == "items" and "prefixItems" not in schema:
            item = self.compile(value)
            return lambda v: type(v) is not list or all(item(x) for x in v)
        if key == "$ref" and isinstance(value, str):
            return self._ref(value)
        raise _Unsupported

    def _one_of(self, branches: list[Any]) -> Check:
        """Exactly one branch valid: one branch passes and every other one surely fails
        (wrong type, or a required property missing); anything less certain says False."""
        pairs = [(self.compile(b), self._refuses(b)) for b in branches]

        def test(v: Any) -> bool:
            passed = 0
            for check, refuses in pairs:
                if check(v):
                    passed += 1
                elif not refuses(v):
                    return False
            return passed == 1

        return test

    def _refuses(self, schema: Any, depth: int = 0) -> Check:
        """True only for values jsonschema surely finds an error in under `schema`, from its
        `type` and `required` alone (exact for the types JSON produces); False otherwise."""
        if not isinstance(schema, dict) or depth > 8:
            return lambda v: False
        tests: list[Check] = []
        if "type" in schema:
            value = schema["type"]
            right_type = _type_test([value] if isinstance(value, str) else value)
            tests.append(lambda v: type(v) in _JSON and not right_type(v))
        if "required" in schema:
            names = tuple(schema["required"])
            tests.append(lambda v: type(v) is dict and any(n not in v for n in names))
        if isinstance(schema.get("$ref"), str):
            tests.append(self._refuses(self._target(schema["$ref"]), depth + 1))
        return lambda v: any(test(v) for test in tests)

    def _object(self, schema: dict[str, Any]) -> Check:
        """`properties` and `additionalProperties` together, in one pass over the keys."""
        if "patternProperties" in schema:
            raise _Unsupported
        props = {k: self.compile(s) for k, s in schema.get("properties", {}).items()}
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is False else self.compile(extra_schema)

        def test(v: Any) -> bool:
            if type(v) is not dict:
                return True
            for key, item in v.items():
                check = props.get(key, extra)
                if check is None or not check(item):
                    return False
            return True

        return test

    def _ref(self, ref: str) -> Check:
        if ref not in self.refs:
            target = self._target(ref)
            resolved: list[Check] = []
            self.refs[ref] = lambda v: resolved[0](v)  # a schema may refer to itself
            resolved.append(self.compile(target))
        return self.refs[ref]

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#/") or "~" in ref or "%" in ref:
            raise _Unsupported
        target: Any = self.root
        for part in ref[2:].split("/"):
            if not isinstance(target, dict) or part not in target:
                raise _Unsupported
            target = target[part]
        return target


_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
_SIZES: dict[str, tuple[type, bool]] = {  # keyword -> (the type it applies to, is a minimum)
    "minItems": (list, True),
    "maxItems": (list, False),
    "minLength": (str, True),
    "maxLength": (str, False),
    "minProperties": (dict, True),
    "maxProperties": (dict, False),
}


def _bound(key: str, limit: float) -> Check:
    strict = key.startswith("exclusive")
    if key.endswith("inimum"):
        return lambda v: type(v) not in (int, float) or (v > limit if strict else v >= limit)
    return lambda v: type(v) not in (int, float) or (v < limit if strict else v <= limit)


def _unique_strings(v: Any) -> bool:
    """uniqueItems, answered only for lists of strings (jsonschema's equality is plain `==`
    there); any other list says False and goes to jsonschema."""
    return type(v) is not list or (all(type(x) is str for x in v) and len(set(v)) == len(v))


_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _date_time(v: Any) -> bool:
    """Surely an RFC 3339 date-time (a real day and time of day), as jsonschema's checker
    reads it; anything it might still accept (a leap second, say) goes to jsonschema."""
    if type(v) is not str:
        return True  # a format applies to strings only
    if not _RFC3339.fullmatch(v):
        return False
    try:
        datetime.fromisoformat(v.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _type_test(names: list[str]) -> Check:
    if not all(n in _TYPES for n in names):
        raise _Unsupported
    allowed = tuple(t for n in names for t in _TYPES[n])
    whole_floats = "integer" in names and "number" not in names

    def test(v: Any) -> bool:
        kind = type(v)
        if kind in allowed:
            return True
        return whole_floats and kind is float and v.is_integer()

    return test


def _same(v: Any, c: Any) -> bool:
    """jsonschema's equality for a scalar `c`: True and 1 differ, 1 and 1.0 do not."""
    if type(v) is str or type(c) is str:
        return v == c
    if type(v) is bool or type(c) is bool:
        return v is c
    return type(v) in (int, float, type(None)) and v == c
