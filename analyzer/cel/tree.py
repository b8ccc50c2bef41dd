"""What both evaluators (program.py's closures, translate.py's Python) ask of a parsed
expression, and the operator tables they share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import runtime as rt
from .syntax import (
    Binary,
    Call,
    Comprehension,
    Conditional,
    Ident,
    Let,
    ListExpr,
    Literal,
    Node,
    Select,
    Unary,
)

ORDER: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c == -1,
    "<=": lambda c: c in (-1, 0),
    ">": lambda c: c == 1,
    ">=": lambda c: c in (0, 1),
}
ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": rt.add,
    "-": rt.subtract,
    "*": rt.multiply,
    "/": rt.divide,
    "%": rt.modulo,
    "in": rt.contained,
}


def operands(node: Node, op: str) -> list[Node]:
    """`a && b && c` (parsed as `(a && b) && c`) as [a, b, c]: one loop, not nested calls."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Binary) and n.op == op:
            stack += (n.right, n.left)
        else:
            out.append(n)
    return out


def string_constants(node: Node) -> bool:
    """Whether `node` is a non-empty list of string literals (`x in ["a", "b"]`)."""
    return (
        isinstance(node, ListExpr)
        and bool(node.items)
        and all(isinstance(i, Literal) and type(i.value) is str for i in node.items)
    )


NOT_CONSTANT = object()


def constant(node: Node) -> Any:
    """A literal's value, or a list of literals' (`[]`, a common default); else NOT_CONSTANT."""
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, ListExpr) and all(isinstance(i, Literal) for i in node.items):
        return [i.value for i in node.items]  # type: ignore[attr-defined]
    return NOT_CONSTANT


def iterates(node: Node) -> bool:
    """Whether the expression holds a comprehension: its cost grows with the data."""
    if isinstance(node, Comprehension):
        return True
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name)
        for child in value if isinstance(value, tuple) else (value,):
            items = child if isinstance(child, tuple) else (child,)  # a map's (key, value)
            if any(isinstance(i, Node) and iterates(i) for i in items):
                return True
    return False


def strict_variables(node: Node, bound: frozenset[str] = frozenset()) -> frozenset[str]:
    """The free variables that `node` reads on every path before anything else can decide
    its value: where one of them cannot be read, evaluating `node` raises."""
    if isinstance(node, Ident):
        return frozenset() if node.name in bound else frozenset({node.name.lstrip(".")})
    if isinstance(node, Binary) and node.op in ("&&", "||"):  # one operand may decide
        return frozenset.intersection(
            *(strict_variables(o, bound) for o in operands(node, node.op))
        )
    if isinstance(node, Conditional):
        either = strict_variables(node.then, bound) & strict_variables(node.otherwise, bound)
        return strict_variables(node.condition, bound) | either
    if isinstance(node, Comprehension):  # an empty range runs no predicate
        return strict_variables(node.range, bound)
    if isinstance(node, Let):
        value = strict_variables(node.value, bound)
        return value | strict_variables(node.body, bound | {node.var})
    found: frozenset[str] = frozenset()  # every other node evaluates all its operands first
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name)
        for child in value if isinstance(value, tuple) else (value,):
            for item in child if isinstance(child, tuple) else (child,):  # a map's (key, value)
                if isinstance(item, Node):
                    found |= strict_variables(item, bound)
    return found


_BOOLEAN_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "&&", "||"})
_BOOLEAN_METHODS = frozenset({"contains", "startsWith", "endsWith", "matches"})


def boolean(node: Node) -> bool:
    """Whether the expression's value is a bool whenever it has one (it may still raise)."""
    if isinstance(node, Literal):
        return type(node.value) is bool
    if isinstance(node, Binary):
        return node.op in _BOOLEAN_OPS
    if isinstance(node, Unary):
        return node.op == "!"
    if isinstance(node, Select):
        return node.test_only
    if isinstance(node, Comprehension):
        return node.kind in ("all", "exists", "exists_one")
    if isinstance(node, Call):
        return node.target is not None and node.function in _BOOLEAN_METHODS
    return False
