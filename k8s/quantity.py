"""Kubernetes resource quantities ("80Gi", "165160m", 71) as numbers."""

from __future__ import annotations

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
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(2) not in _SUFFIX:
        raise QuantityError(f"not a quantity: {value!r}")
    try:
        number = float(match.group(1)) * _SUFFIX[match.group(2)]
    except ValueError:  # "1.2.3"
        raise QuantityError(f"not a quantity: {value!r}") from None
    return number
