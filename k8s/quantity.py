"""Kubernetes resource quantities ("80Gi", "165160m", 71) as numbers."""

from __future__ import annotations

import functools
import re
from typing import Any

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


def quantity(value: Any) -> float:
    """A Kubernetes quantity ("80Gi", "165160m", 71) as a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return _parsed(str(value))


@functools.lru_cache(maxsize=4096)  # a cluster's objects ask for the same few sizes
def _parsed(text: str) -> float:
    match = _QUANTITY.match(text.strip())
    if not match or match.group(2) not in _SUFFIX:
        raise QuantityError(f"not a quantity: {text!r}")
    try:
        number = float(match.group(1)) * _SUFFIX[match.group(2)]
    except ValueError:  # "1.2.3"
        raise QuantityError(f"not a quantity: {text!r}") from None
    return number
