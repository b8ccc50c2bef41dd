"""The objects of one resource, indexed for the selectors rules and reports ask with."""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any

from k8s.selectors import (
    EQUALS,
    EXISTS,
    IN,
    NOT_EXISTS,
    FieldSelector,
    LabelSelector,
    field_value,
)


class ObjectIndex:
    """The objects of one resource, in (namespace, name) order, indexed on first use by
    namespace, by label (key, value) and by the value of a selector field (most of a bundle's
    resources are never queried so). A query starts from the smallest matching bucket and
    applies the rest of the selector to that bucket only."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self._by_field: dict[str, dict[str, list[dict[str, Any]]]] = {}

    @functools.cached_property
    def _pos(self) -> dict[int, int]:
        return {id(o): i for i, o in enumerate(self.items)}

    @functools.cached_property
    def _by_ns(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            found[obj["metadata"].get("namespace")].append(obj)
        return found

    @functools.cached_property
    def _by_label(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            for key, value in (obj["metadata"].get("labels") or {}).items():
                found[(key, value)].append(obj)
        return found

    @functools.cached_property
    def _by_key(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            for key in obj["metadata"].get("labels") or {}:
                found[key].append(obj)
        return found

    def _without(self, key: str) -> list[dict[str, Any]]:
        """The objects without the label `key` (`!key`), in order."""
        having = {id(o) for o in self._by_key.get(key, ())}
        return [o for o in self.items if id(o) not in having] if having else self.items

    def select(
        self, namespace: str | None, labels: LabelSelector | None, fields: FieldSelector | None
    ) -> list[dict[str, Any]]:
        # Each bucket holds exactly the objects that meet one term (the namespace, a label
        # requirement, a field requirement): only the other terms are tested on it.
        buckets: list[tuple[list[dict[str, Any]], object]] = []
        if namespace is not None:
            buckets.append((self._by_ns.get(namespace, []), namespace))
        for req in labels.requirements if labels else ():
            if req.operator in (EQUALS, IN):
                found = self._union([self._by_label.get((req.key, v), []) for v in req.values])
                buckets.append((found, req))
            elif req.operator == EXISTS:
                buckets.append((self._by_key.get(req.key, []), req))
            elif req.operator == NOT_EXISTS:
                buckets.append((self._without(req.key), req))
        for freq in fields.requirements if fields else ():
            if freq.operator == "=":
                buckets.append((self._field(freq.field).get(freq.value, []), freq))
        base, met = min(buckets, key=lambda b: len(b[0])) if buckets else (self.items, None)
        in_ns = namespace if namespace is not None and met is not namespace else None
        label_reqs = [r for r in (labels.requirements if labels else ()) if r is not met]
        field_reqs = [r for r in (fields.requirements if fields else ()) if r is not met]
        if in_ns is None and not label_reqs and not field_reqs:
            return list(base)
        return [
            o
            for o in base
            if (in_ns is None or o["metadata"].get("namespace") == in_ns)
            and all(r.matches(o["metadata"].get("labels") or {}) for r in label_reqs)
            and all((field_value(o, r.field) == r.value) == (r.operator == "=") for r in field_reqs)
        ]

    def _union(self, lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        if len(lists) == 1:
            return lists[0]
        merged = {id(o): o for chunk in lists for o in chunk}
        return sorted(merged.values(), key=lambda o: self._pos[id(o)])

    def _field(self, path: str) -> dict[str, list[dict[str, Any]]]:
        index = self._by_field.get(path)
        if index is None:
            index = self._by_field[path] = defaultdict(list)
            for obj in self.items:
                index[field_value(obj, path)].append(obj)
        return index
