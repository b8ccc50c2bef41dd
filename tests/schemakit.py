"""Documents changed a little at random, for testing the schemas' validator
(`schemas.first_error`) against a Draft 2020-12 validator with format checking made here: both
must accept and refuse the same documents, and a refusal is one line naming a path."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cache
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

import tf_support_schemas as schemas

ODD = [None, True, False, 0, 1, -1, 1.0, 1.5, -0.5, "", "ok", "x y", "2026-11-30", [], ["a"],
       {}, {"a": 1}, 2**70, "UPPER", "a-b"]  # fmt: skip


def mutate(
    data: st.DataObject, doc: Any, keys: Sequence[str], odd: Sequence[Any] = ODD, depth: int = 3
) -> Any:
    """A deep copy of `doc` with one to three things set, added, dropped or duplicated a few
    levels down; new keys come from `keys`, new values from `odd`."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        target: Any = doc
        for _ in range(data.draw(st.integers(0, depth))):
            children = list(target.items()) if isinstance(target, dict) else list(enumerate(target))
            children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
            if not children:
                break
            target = data.draw(st.sampled_from(children))[1]
        present = list(target) if isinstance(target, dict) else list(range(len(target)))
        action = data.draw(st.sampled_from(["set", "add", "drop", "dup"]))
        if action == "add" and isinstance(target, dict):
            target[data.draw(st.sampled_from(keys))] = copy.deepcopy(
                data.draw(st.sampled_from(odd))
            )
        elif action == "dup" and isinstance(target, list) and target:
            target.append(copy.deepcopy(data.draw(st.sampled_from(target))))
        elif present and action == "drop":
            del target[data.draw(st.sampled_from(present))]
        elif present:
            target[data.draw(st.sampled_from(present))] = copy.deepcopy(
                data.draw(st.sampled_from(odd))
            )
    return doc


@cache
def _reference(name: str) -> Draft202012Validator:
    return Draft202012Validator(schemas.load(name), format_checker=FormatChecker())


def assert_validators_agree(name: str, doc: Any) -> None:
    errors = [e.message for e in _reference(name).iter_errors(doc)]
    problem = schemas.first_error(name, doc)
    assert (problem is None) == (errors == []), (problem, errors[:3])
    assert problem is None or ("\n" not in problem and ": " in problem), problem


def property_names(schema: Any) -> list[str]:
    """Every property name a schema mentions, sorted: keys a fuzzer should try."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(k for k in node.get("properties", {}) if isinstance(k, str))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return sorted(found)


def json_values(keys: Sequence[str], max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Any value JSON can hold (NaN and infinities too: Python's parser reads them), with
    object keys mostly from `keys`."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats()
        | st.text(max_size=12)
        | st.sampled_from(["2026-11-30T10:00:00Z", "critical", "ok", "pods", "en", "zh"])
    )
    names = st.sampled_from(list(keys)) | st.text(max_size=6) if keys else st.text(max_size=6)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=5),
        max_leaves=max_leaves,
    )


def near(value: Any) -> st.SearchStrategy[Any]:
    """Values just across a schema's lines from `value`: a half, a whole float or a bool for
    a number, a long or empty string, a list grown or emptied."""
    if type(value) in (int, float):
        return st.sampled_from([value + 0.5, float(value), -value - 1, True, False, 2**63, None])
    if type(value) is bool:
        return st.sampled_from([int(value), float(value), not value, str(value).lower()])
    if type(value) is str:
        return st.sampled_from(["", value * 20 + "x" * 400, value.upper(), f" {value}", 0])
    if type(value) is list:
        return st.sampled_from([[], value + value[:1], value * 30, value[:1] * 2, {}])
    return st.just(value)


def graft(data: st.DataObject, doc: Any, values: st.SearchStrategy[Any], depth: int = 5) -> Any:
    """A deep copy of `doc` with one member, a few levels down, replaced by (or, in an
    object, added as) a value drawn from `values`, or by one `near` the value it had."""
    doc = copy.deepcopy(doc)
    target: Any = doc
    for _ in range(data.draw(st.integers(0, depth))):
        children = list(target.values()) if isinstance(target, dict) else list(target)
        children = [v for v in children if isinstance(v, (dict, list)) and v]
        if not children:
            break
        target = data.draw(st.sampled_from(children))
    if isinstance(target, dict):
        slot: Any = (
            data.draw(st.sampled_from(sorted(target)) | st.text(max_size=6)) if target else ""
        )
    elif target:
        slot = data.draw(st.integers(0, len(target) - 1))
    else:
        return data.draw(values)
    old = target.get(slot) if isinstance(target, dict) else target[slot]
    target[slot] = data.draw(values | near(old) | near(old))
    return doc
