"""CEL's operators and standard functions over plain Python values.

Values are what JSON gives: None (null), bool, int, float (double), str, bytes, list and dict
(map). CEL does not coerce: `1 + 2.0` and `"a" + 1` are errors, `int("1.5")` is an error, and
`true` is not `1`. Equality is heterogeneous (numbers compare by value, other mixed types are
unequal), as in the current CEL specification.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

INT_MIN, INT_MAX = -(2**63), 2**63 - 1


class CelError(Exception):
    """An evaluation error: CEL's error value, raised."""


class Unknown(Exception):
    """A value the host could not provide (data that was not collected). Like CEL's unknowns
    it is absorbed where the other side of `&&`/`||` decides, and otherwise passed through to
    the host unchanged, never turned into an error."""


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value)) or (
        "map"
        if isinstance(value, dict)
        else "list"
        if isinstance(value, (list, tuple))
        else type(value).__name__
    )


_TYPE_NAMES = {
    bool: "bool",
    int: "int",
    float: "double",
    str: "string",
    bytes: "bytes",
    list: "list",
    tuple: "list",
    dict: "map",
}
_NUMBERS = (int, float)
_LISTS = (list, tuple)


def no_overload(op: str, *values: Any) -> CelError:
    kinds = ", ".join(type_name(v) for v in values)
    return CelError(f"no such overload: {op}({kinds})")


def checked_int(value: int) -> int:
    if value < INT_MIN or value > INT_MAX:
        raise CelError("int overflow")
    return value


# ------------------------------------------------------------------------ equality, order


def equal(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is list or ta is tuple:
            return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
        if ta is dict:
            return len(a) == len(b) and all(k in b and equal(v, b[k]) for k, v in a.items())
        return bool(a == b)
    if ta in _NUMBERS and tb in _NUMBERS:
        return bool(a == b)
    if ta in _LISTS and tb in _LISTS:
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and equal(v, b[k]) for k, v in a.items())
    return False


def compare(op: str, a: Any, b: Any) -> int:
    """-1, 0 or 1 for values CEL can order: numbers (across int and double), strings,
    bools, bytes."""
    ta, tb = type(a), type(b)
    if not (ta is tb and ta in (str, bool, bytes, int, float)) and not (
        ta in _NUMBERS and tb in _NUMBERS
    ):
        raise no_overload(op, a, b)
    if (ta is float or tb is float) and (math.isnan(a) or math.isnan(b)):
        return 2  # unordered: every comparison is false
    return (a > b) - (a < b)


def contained(item: Any, container: Any) -> bool:
    if isinstance(container, _LISTS):
        if type(item) is str:  # a string equals only a string: Python's own test is exact
            return item in container
        return any(equal(item, x) for x in container)
    if isinstance(container, dict):
        if type(item) is str:
            return item in container
        if type(item) in (int, float, bool):
            return any(equal(item, key) for key in container)
        raise no_overload("in", item, container)
    raise no_overload("in", item, container)


# ------------------------------------------------------------------------ access


def select(value: Any, fields: tuple[str, ...]) -> Any:
    """`value.a.b.c`: each step must be a map holding the field."""
    for name in fields:
        if isinstance(value, dict):
            try:
                value = value[name]
            except KeyError:
                raise CelError(f"no such key: {name}") from None
        else:
            raise CelError(f"no field {name!r} on {type_name(value)}")
    return value


def index(value: Any, key: Any) -> Any:
    """`value[key]` on a list (an integral index in range) or a map."""
    if isinstance(value, _LISTS):
        if type(key) is float and key.is_integer():
            key = int(key)
        if type(key) is not int:
            raise no_overload("_[_]", value, key)
        if not 0 <= key < len(value):
            raise CelError(f"index out of range: {key}")
        return value[key]
    if isinstance(value, dict):
        if type(key) not in (str, int, bool, float):
            raise no_overload("_[_]", value, key)
        try:
            return value[key]
        except KeyError:
            raise CelError(f"no such key: {key}") from None
    raise no_overload("_[_]", value, key)


def over_budget() -> CelError:
    return CelError("evaluation budget exceeded (an expression visits too many elements)")


def elements(value: Any) -> Any:
    """What a comprehension iterates: a list's items, a map's keys."""
    if isinstance(value, _LISTS):
        return value
    if isinstance(value, dict):
        return list(value)
    raise CelError(f"cannot iterate over {type_name(value)}")


# ------------------------------------------------------------------------ arithmetic


def add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is str or ta is float or ta is bytes:
            return a + b
        if ta is int:
            return checked_int(a + b)
        if ta is list or ta is tuple:
            return list(a) + list(b)
    elif ta in _LISTS and type(b) in _LISTS:
        return list(a) + list(b)
    raise no_overload("_+_", a, b)


def subtract(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            return checked_int(a - b)
        if ta is float:
            return a - b
    raise no_overload("_-_", a, b)


def multiply(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            return checked_int(a * b)
        if ta is float:
            return a * b
    raise no_overload("_*_", a, b)


def divide(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            if b == 0:
                raise CelError("division by zero")
            q = abs(a) // abs(b)
            return checked_int(q if (a < 0) == (b < 0) else -q)  # truncates toward zero
        if ta is float:
            if b == 0.0:
                if a == 0.0 or math.isnan(a):
                    return math.nan
                return math.copysign(math.inf, a) * math.copysign(1.0, b)
            return a / b
    raise no_overload("_/_", a, b)


def modulo(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        if b == 0:
            raise CelError("modulus by zero")
        r = abs(a) % abs(b)
        return r if a >= 0 else -r  # the sign of the dividend, as in C and Go
    raise no_overload("_%_", a, b)


def negate(a: Any) -> Any:
    if type(a) is int:
        return checked_int(-a)
    if type(a) is float:
        return -a
    raise no_overload("-_", a)


def logical_not(a: Any) -> bool:
    if a is True or a is False:
        return not a
    raise no_overload("!_", a)


# ------------------------------------------------------------------------ conversions

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|Inf|infinity|Infinity|NaN)"
)
_BOOL_TEXT = {
    "true": True,
    "True": True,
    "TRUE": True,
    "t": True,
    "1": True,
    "false": False,
    "False": False,
    "FALSE": False,
    "f": False,
    "0": False,
}


def to_int(value: Any) -> int:
    t = type(value)
    if t is int:
        return value
    if t is float:
        if math.isnan(value) or not (INT_MIN <= value < 2.0**63):
            raise CelError(f"double {format_double(value)} is out of the int range")
        return int(value)
    if t is str:
        if not _INT_TEXT.fullmatch(value):
            raise CelError(f"cannot convert {value!r} to int")
        return checked_int(int(value))
    raise no_overload("int", value)


def to_double(value: Any) -> float:
    t = type(value)
    if t is float:
        return value
    if t is int:
        return float(value)
    if t is str:
        if not _FLOAT_TEXT.fullmatch(value):
            raise CelError(f"cannot convert {value!r} to double")
        return float(value)
    raise no_overload("double", value)


def format_double(value: float) -> str:
    """Like CEL implementations print doubles: shortest round-trip digits, never an
    exponent, no trailing `.0` (80.0 -> "80", 1e6 -> "1000000", 0.5 -> "0.5")."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text[:-2] if text.endswith(".0") else text


def to_string(value: Any) -> str:
    t = type(value)
    if t is str:
        return value
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if t is float:
        return format_double(value)
    if t is bytes:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CelError("bytes are not valid UTF-8") from exc
    raise no_overload("string", value)


def to_bool(value: Any) -> bool:
    if value is True or value is False:
        return value
    if type(value) is str and value in _BOOL_TEXT:
        return _BOOL_TEXT[value]
    raise no_overload("bool", value)


def to_bytes(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if type(value) is str:
        return value.encode("utf-8")
    raise no_overload("bytes", value)


def size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return len(value)  # strings: code points, as the specification says
    raise no_overload("size", value)


# ------------------------------------------------------------------------ strings


def _string_method(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` over a string receiver and string arguments; any other type is no overload."""

    def unary(text: Any) -> Any:
        if type(text) is str:
            return fn(text)
        raise no_overload(name, text)

    def binary(text: Any, arg: Any) -> Any:
        if type(text) is str and type(arg) is str:
            return fn(text, arg)
        raise no_overload(name, text, arg)

    return unary if fn.__code__.co_argcount == 1 else binary


@functools.lru_cache(maxsize=512)
def regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CelError(f"invalid regex {pattern!r}: {exc}") from exc


def matches(text: Any, pattern: Any) -> bool:
    if type(text) is not str or type(pattern) is not str:
        raise no_overload("matches", text, pattern)
    return regex(pattern).search(text) is not None  # CEL matches anywhere, like RE2


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def split(text: Any, sep: Any, limit: Any = -1) -> list[str]:
    if type(text) is not str or type(sep) is not str or type(limit) is not int:
        raise no_overload("split", text, sep, limit)
    if limit == 0:
        return []
    if sep == "":
        chars = list(text)
        return chars if limit < 0 else [*chars[: limit - 1], "".join(chars[limit - 1 :])]
    return text.split(sep, limit - 1 if limit > 0 else -1)


def join(items: Any, sep: Any = "") -> str:
    if not isinstance(items, _LISTS) or type(sep) is not str:
        raise no_overload("join", items, sep)
    if not all(type(i) is str for i in items):
        raise CelError("join: every element must be a string")
    return sep.join(items)


def replace(text: Any, old: Any, new: Any, limit: Any = -1) -> str:
    if not all(type(a) is str for a in (text, old, new)) or type(limit) is not int:
        raise no_overload("replace", text, old, new, limit)
    return text.replace(old, new, limit)


# Functions called as `f(x)`.
GLOBAL: dict[str, Callable[..., Any]] = {
    "size": size,
    "int": to_int,
    "uint": to_int,
    "double": to_double,
    "string": to_string,
    "bool": to_bool,
    "bytes": to_bytes,
    "dyn": lambda value: value,
    "type": type_name,
    "matches": matches,
}
# Functions called as `x.f(...)`, the receiver first.
MEMBER: dict[str, Callable[..., Any]] = {
    "size": size,
    "matches": matches,
    "contains": _string_method("contains", lambda s, sub: sub in s),
    "startsWith": _string_method("startsWith", lambda s, p: s.startswith(p)),
    "endsWith": _string_method("endsWith", lambda s, p: s.endswith(p)),
    "lowerAscii": _string_method("lowerAscii", lambda s: s.translate(_ASCII_LOWER)),
    "upperAscii": _string_method("upperAscii", lambda s: s.translate(_ASCII_UPPER)),
    "trim": _string_method("trim", lambda s: s.strip()),
    "split": split,
    "join": join,
    "replace": replace,
}
