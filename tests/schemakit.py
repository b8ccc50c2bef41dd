"""Documents changed a little at random, for testing the schemas' quick checks against
jsonschema: each quick check must never pass what jsonschema refuses."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

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


def assert_quick_check_agrees(name: str, doc: Any) -> None:
    slow = sorted(
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
        for e in schemas.validator(name).iter_errors(doc)
    )
    if schemas._quick_check(name)(doc):
        assert slow == []
    assert schemas.errors(name, doc) == slow
