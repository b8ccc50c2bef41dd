"""The functions rules may call besides CEL's own: Kubernetes quantities, dotted paths,
labels and annotations (their keys contain dots and slashes), regex groups, max and min."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from .cel.translate import remembered, subscripts

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}


class QuantityError(ValueError):
    pass


_QUANTITIES: dict[str, float] = {}


@remembered(_QUANTITIES)
def quantity(value: Any) -> float:
    """A Kubernetes quantity ("80Gi", "165160m", 71) as a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if type(value) is str:
        known = _QUANTITIES.get(value)
        if known is not None:
            return known
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(2) not in _SUFFIX:
        raise QuantityError(f"not a quantity: {value!r}")
    try:
        number = float(match.group(1)) * _SUFFIX[match.group(2)]
    except ValueError:  # "1.2.3"
        raise QuantityError(f"not a quantity: {value!r}") from None
    if type(value) is str and len(_QUANTITIES) < 4096:
        _QUANTITIES[value] = number  # 10,000 pods ask for the same few sizes
    return number


@functools.lru_cache(maxsize=2048)
def _parts(path: str) -> tuple[tuple[str, int | None], ...]:
    return tuple((p, int(p) if p.isdigit() else None) for p in path.split("."))


def _dig_keys(path: Any, default: Any = None) -> tuple[tuple[str, ...], Any, bool] | None:
    # A numeric step may index a list (and a string would answer an int): no fast path.
    if type(path) is not str or any(p.isdigit() for p in path.split(".")):
        return None
    return tuple(path.split(".")), default, False


@subscripts(_dig_keys)
def dig(obj: Any, path: str, default: Any = None) -> Any:
    """obj at a dotted path ("status.phase"), or default where any step is missing."""
    cur = obj
    for part, number in _parts(path):
        if isinstance(cur, dict):
            if part not in cur:
                return default
            cur = cur[part]
        elif isinstance(cur, list) and number is not None and number < len(cur):
            cur = cur[number]
        else:
            return default
    return cur


def _meta_keys(which: str) -> Callable[[Any], tuple[tuple[str, ...], str, bool] | None]:
    return lambda key: (("metadata", which, key), "", True) if type(key) is str else None


@subscripts(_meta_keys("annotations"))
def annotation(obj: Any, key: str) -> str:
    """metadata.annotations[key], or "" when absent (keys contain dots, so dig cannot)."""
    return _meta_value(obj, "annotations", key)


@subscripts(_meta_keys("labels"))
def label(obj: Any, key: str) -> str:
    return _meta_value(obj, "labels", key)


def _meta_value(obj: Any, which: str, key: str) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    values = meta.get(which) if isinstance(meta, dict) else None
    if not isinstance(values, dict):
        return ""
    value = values.get(key, "")
    return value if type(value) is str else str(value)


def extract(text: str, pattern: str) -> str:
    """The first group of `pattern` (a Python regex) in `text`, or "" when it does not match."""
    found = _regex(pattern).search(text)
    if not found:
        return ""
    return found.group(1) if found.groups() else found.group(0)


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"bad regex {pattern!r}: {exc}") from exc


def _max(values: list[Any], default: Any = 0.0) -> Any:
    return max(values) if values else default


def _min(values: list[Any], default: Any = 0.0) -> Any:
    return min(values) if values else default


def _sum(values: list[Any]) -> float:
    """The sum of a list of numbers (CEL has no sum): 0.0 for an empty list."""
    if not isinstance(values, list):
        raise TypeError(f"sum() takes a list, not {type(values).__name__}")
    total = 0.0
    for v in values:
        if type(v) not in (int, float):
            raise TypeError(f"sum() of a list holding {type(v).__name__}")
        total += v
    return total


FUNCTIONS = {
    "quantity": quantity,
    "dig": dig,
    "annotation": annotation,
    "label": label,
    "extract": extract,
    "max": _max,
    "min": _min,
    "sum": _sum,
}
