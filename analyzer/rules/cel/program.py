"""A parsed CEL expression turned into nested Python closures that work on the bundle's own
objects: no value is converted or copied to evaluate it, so a rule over many pods costs what
its expression touches, not what the pods weigh.

Errors follow CEL: `&&`, `||`, `all` and `exists` absorb an error when the other side
decides the result (`true || error` is true); everything else passes the error on. A budget
on the elements that comprehensions visit stops runaway expressions in user rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import runtime as rt
from .runtime import CelError, Unknown
from .syntax import (
    Binary,
    Call,
    Comprehension,
    Conditional,
    Ident,
    Index,
    Let,
    ListExpr,
    Literal,
    MapExpr,
    Node,
    Select,
    Unary,
    parse,
)

BUDGET = 5_000_000  # comprehension elements one evaluation may visit
MAX_TREE_DEPTH = 150  # operators nested in operators (`1 + 1 + ...`), within Python's stack
_STEPS = "#steps"  # the budget left, kept with the comprehension variables (not a CEL name)

# A compiled node: (variables, comprehension locals) -> value.
Fn = Callable[[Mapping[str, Any], dict[str, Any]], Any]

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


class CelCompileError(ValueError):
    pass


@dataclass(frozen=True)
class Function:
    """A function defined in CEL: `name(a, b)` binds the parameters to the arguments' values
    (cel.bind, with every argument evaluated first, in the caller's scope) and evaluates
    `body`, which reads its parameters only."""

    name: str
    params: tuple[str, ...]
    source: str
    body: Node = field(compare=False, repr=False)

    @classmethod
    def define(
        cls,
        name: str,
        params: tuple[str, ...],
        source: str,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        defined: Mapping[str, Function] | None = None,
    ) -> Function:
        """Parse and check the body; it may call the functions `defined` before it."""
        body = parse(source)
        compiler = _Compiler(dict(functions or {}), dict(defined or {}))
        compiler.node(body, frozenset(params))
        if compiler.variables:
            unknown = ", ".join(sorted(compiler.variables))
            raise CelCompileError(f"reads {unknown}, which is not one of its parameters")
        return cls(name, params, source, body)


@dataclass(frozen=True)
class Program:
    source: str
    variables: frozenset[str]  # free variables the expression reads
    functions: frozenset[str]  # functions it calls
    _fn: Fn = field(compare=False, repr=False)

    def run(self, variables: Mapping[str, Any], budget: int = BUDGET) -> Any:
        """The value of the expression; CelError when it evaluates to an error."""
        try:
            return self._fn(variables, {_STEPS: budget})
        except (CelError, Unknown):
            raise
        except RecursionError as exc:
            raise CelError("expression too deeply nested to evaluate") from exc
        except Exception as exc:  # a function given by the host failed
            raise CelError(f"{type(exc).__name__}: {exc}") from exc


def compile(
    source: str,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    defined: Mapping[str, Function] | None = None,
) -> Program:
    """Parse and check `source`; `functions` are the host's own global functions, `defined`
    the functions defined in CEL."""
    tree = parse(source)
    compiler = _Compiler(dict(functions or {}), dict(defined or {}))
    fn = compiler.node(tree, frozenset())
    return Program(source, frozenset(compiler.variables), frozenset(compiler.called), fn)


class _Compiler:
    def __init__(
        self, functions: dict[str, Callable[..., Any]], defined: dict[str, Function]
    ) -> None:
        self.host = functions
        self.defined = defined
        self.variables: set[str] = set()
        self.called: set[str] = set()
        self.depth = 0

    def node(self, node: Node, scope: frozenset[str]) -> Fn:
        self.depth += 1
        if self.depth > MAX_TREE_DEPTH:
            raise CelCompileError(f"expression nested deeper than {MAX_TREE_DEPTH} operations")
        method = getattr(self, "_" + type(node).__name__.lower())
        fn = method(node, scope)
        self.depth -= 1
        return fn

    # -- leaves
    def _literal(self, node: Literal, scope: frozenset[str]) -> Fn:
        value = node.value
        return lambda g, loc: value

    def _ident(self, node: Ident, scope: frozenset[str]) -> Fn:
        name = node.name.lstrip(".")
        if node.name in scope:
            return lambda g, loc: loc[name]
        self.variables.add(name)

        def variable(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            try:
                return g[name]
            except KeyError:
                raise CelError(f"undeclared reference to {name!r}") from None

        return variable

    def _listexpr(self, node: ListExpr, scope: frozenset[str]) -> Fn:
        items = [self.node(i, scope) for i in node.items]
        if all(isinstance(i, Literal) for i in node.items):
            const = [i.value for i in node.items]  # type: ignore[attr-defined]
            return lambda g, loc: const
        return lambda g, loc: [f(g, loc) for f in items]

    def _mapexpr(self, node: MapExpr, scope: frozenset[str]) -> Fn:
        entries = [(self.node(k, scope), self.node(v, scope)) for k, v in node.entries]

        def mapping(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            out: dict[Any, Any] = {}
            for kf, vf in entries:
                key = kf(g, loc)
                if type(key) not in (str, int, bool):
                    raise CelError(f"unsupported map key type {rt.type_name(key)}")
                if key in out:
                    raise CelError(f"repeated map key {key!r}")
                out[key] = vf(g, loc)
            return out

        return mapping

    # -- access
    def _select(self, node: Select, scope: frozenset[str]) -> Fn:
        field = node.field
        if node.test_only:
            operand = self.node(node.operand, scope)

            def has(g: Mapping[str, Any], loc: dict[str, Any]) -> bool:
                value = operand(g, loc)
                if isinstance(value, dict):
                    return field in value
                raise CelError(f"has(): no field {field!r} on {rt.type_name(value)}")

            return has

        # `pod.metadata.namespace` is one walk down the path, not a closure per field.
        base, path = node.operand, [field]
        while isinstance(base, Select) and not base.test_only:
            path.insert(0, base.field)
            base = base.operand
        start, fields = self.node(base, scope), tuple(path)

        return lambda g, loc: rt.select(start(g, loc), fields)

    def _index(self, node: Index, scope: frozenset[str]) -> Fn:
        operand, index = self.node(node.operand, scope), self.node(node.index, scope)

        return lambda g, loc: rt.index(operand(g, loc), index(g, loc))

    # -- calls
    def _call(self, node: Call, scope: frozenset[str]) -> Fn:
        args = [self.node(a, scope) for a in node.args]
        name = node.function.lstrip(".")
        if node.target is not None:
            fn = rt.MEMBER.get(name)
            if fn is None:
                raise CelCompileError(f"undeclared function {name!r} (as x.{name}(...))")
            self.called.add(name)
            target = self.node(node.target, scope)
            if len(args) == 0:
                return lambda g, loc: fn(target(g, loc))
            if len(args) == 1:
                arg = node.args[0]
                if name in _STRING_TESTS and isinstance(arg, Literal) and type(arg.value) is str:
                    return _string_test(name, fn, target, arg.value)
                (a0,) = args
                return lambda g, loc: fn(target(g, loc), a0(g, loc))
            return lambda g, loc: fn(target(g, loc), *[a(g, loc) for a in args])
        if name in self.defined:
            self.called.add(name)
            return self._defined(self.defined[name], args)
        host = self.host.get(name)
        fn = host or rt.GLOBAL.get(name)
        if fn is None:
            raise CelCompileError(f"undeclared function {name!r}")
        self.called.add(name)
        if host is None:
            if len(args) == 1:
                (a0,) = args
                return lambda g, loc: fn(a0(g, loc))
            return lambda g, loc: fn(*[a(g, loc) for a in args])

        # Most calls compute one argument and give the rest as literals (a label's key, a
        # path): no list built and no closure called for those.
        if args and all(isinstance(a, Literal) for a in node.args[1:]):
            a0, rest = args[0], tuple(a.value for a in node.args[1:])  # type: ignore[attr-defined]

            def host_call(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
                first = a0(g, loc)
                try:
                    return host(first, *rest)
                except (CelError, Unknown):
                    raise
                except Exception as exc:  # the host's error is a CEL error: `||` may absorb it
                    raise CelError(f"{name}(): {exc}") from exc

            return host_call

        def host_call_all(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            values = [a(g, loc) for a in args]
            try:
                return host(*values)
            except (CelError, Unknown):
                raise
            except Exception as exc:
                raise CelError(f"{name}(): {exc}") from exc

        return host_call_all

    def _defined(self, function: Function, args: list[Fn]) -> Fn:
        params = function.params
        if len(args) != len(params):
            raise CelCompileError(
                f"{function.name}() takes {len(params)} argument(s), not {len(args)}"
            )
        body = self.node(function.body, frozenset(params))
        if len(params) == 1:  # most functions: one binding, as cel.bind makes it
            (param,), (arg,) = params, args

            def call_one(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
                value = arg(g, loc)
                saved = loc.get(param, _UNSET)
                loc[param] = value
                try:
                    return body(g, loc)
                finally:
                    _restore(loc, param, saved)

            return call_one

        def call(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            values = [a(g, loc) for a in args]
            saved = [loc.get(p, _UNSET) for p in params]
            loc.update(zip(params, values, strict=True))
            try:
                return body(g, loc)
            finally:
                for param, old in zip(params, saved, strict=True):
                    _restore(loc, param, old)

        return call

    # -- operators
    def _unary(self, node: Unary, scope: frozenset[str]) -> Fn:
        operand = self.node(node.operand, scope)
        op = rt.logical_not if node.op == "!" else rt.negate
        return lambda g, loc: op(operand(g, loc))

    def _binary(self, node: Binary, scope: frozenset[str]) -> Fn:
        if node.op in ("&&", "||"):
            return _logical(node.op, [self.node(n, scope) for n in operands(node, node.op)])
        left, right = self.node(node.left, scope), self.node(node.right, scope)
        if (
            node.op in ("==", "!=")
            and isinstance(node.right, Literal)
            and type(node.right.value) is str
        ):
            const, negate = node.right.value, node.op == "!="
            # A string against a string literal, the most common comparison in rules.
            return lambda g, loc: (
                negate is not (v == const if type(v := left(g, loc)) is str else rt.equal(v, const))
            )
        if node.op == "==":
            return lambda g, loc: rt.equal(left(g, loc), right(g, loc))
        if node.op == "!=":
            return lambda g, loc: not rt.equal(left(g, loc), right(g, loc))
        if node.op in ORDER:
            return _ordering(node.op, left, right)
        if node.op == "in" and string_constants(node.right):
            items = [i.value for i in node.right.items]  # type: ignore[attr-defined]
            names = frozenset(items)
            return lambda g, loc: (
                v in names if type(v := left(g, loc)) is str else rt.contained(v, items)
            )
        op = ARITHMETIC[node.op]
        return lambda g, loc: op(left(g, loc), right(g, loc))

    def _conditional(self, node: Conditional, scope: frozenset[str]) -> Fn:
        cond = self.node(node.condition, scope)
        then, otherwise = self.node(node.then, scope), self.node(node.otherwise, scope)

        def conditional(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            c = cond(g, loc)
            if c is True:
                return then(g, loc)
            if c is False:
                return otherwise(g, loc)
            raise rt.no_overload("_?_:_", c)

        return conditional

    def _let(self, node: Let, scope: frozenset[str]) -> Fn:
        value, var = self.node(node.value, scope), node.var
        body = self.node(node.body, scope | {var})

        def let(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
            saved = loc.get(var, _UNSET)
            loc[var] = value(g, loc)
            try:
                return body(g, loc)
            finally:
                _restore(loc, var, saved)

        return let

    def _comprehension(self, node: Comprehension, scope: frozenset[str]) -> Fn:
        over = self.node(node.range, scope)
        inner = scope | {node.var}
        pred = self.node(node.predicate, inner) if node.predicate is not None else None
        transform = self.node(node.transform, inner) if node.transform is not None else None
        return _COMPREHENSIONS[node.kind](node.var, over, pred, transform)


_STRING_TESTS = {
    "contains": str.__contains__,
    "startsWith": str.startswith,
    "endsWith": str.endswith,
}


def _string_test(name: str, checked: Callable[..., Any], target: Fn, literal: str) -> Fn:
    """`x.contains("...")` and its kin, the most common calls in rules, without the type
    check on the literal; other receivers go the checked way (and fail as they should)."""
    test = _STRING_TESTS[name]

    def string_test(g: Mapping[str, Any], loc: dict[str, Any]) -> Any:
        text = target(g, loc)
        return test(text, literal) if type(text) is str else checked(text, literal)

    return string_test


def _ordering(op: str, left: Fn, right: Fn) -> Fn:
    test = ORDER[op]

    def ordering(g: Mapping[str, Any], loc: dict[str, Any]) -> bool:
        a, b = left(g, loc), right(g, loc)
        ta = type(a)
        if ta is type(b) and (ta is int or ta is str):  # the common case, exact
            return bool(test((a > b) - (a < b)))
        return bool(test(rt.compare(f"_{op}_", a, b)))

    return ordering


def _logical(op: str, operands: list[Fn]) -> Fn:
    """CEL's commutative && and ||: the first operand that decides (false for &&, true for
    ||) is the value, whatever errors the others raise; with none deciding, the first error
    (or non-bool) in order is the error."""
    decisive = op == "||"
    name = f"_{op}_"

    def logical(g: Mapping[str, Any], loc: dict[str, Any]) -> bool:
        error: Exception | None = None
        for operand in operands:
            try:
                value = operand(g, loc)
            except Exception as exc:
                exc.__traceback__ = None  # it holds this frame, which would hold it
                if error is None:
                    error = exc
                continue
            if value is decisive:
                return decisive
            if value is not (not decisive) and error is None:
                error = rt.no_overload(name, value)
        if error is not None:
            raise error
        return not decisive

    return logical


def _elements(value: Any, loc: dict[str, Any]) -> Any:
    items = rt.elements(value)
    left = loc[_STEPS] - len(items)
    if left < 0:
        raise rt.over_budget()
    loc[_STEPS] = left
    return items


_UNSET = object()


def _quantifier(all_: bool) -> Callable[..., Fn]:
    decisive = not all_  # exists stops at true, all at false

    def make(var: str, over: Fn, pred: Fn, _t: Fn | None) -> Fn:
        def quantifier(g: Mapping[str, Any], loc: dict[str, Any]) -> bool:
            items = _elements(over(g, loc), loc)
            saved = loc.get(var, _UNSET)
            error: Exception | None = None
            try:
                for item in items:
                    loc[var] = item
                    try:
                        value = pred(g, loc)
                    except Exception as exc:
                        exc.__traceback__ = None  # it holds this frame, which would hold it
                        error = error or exc
                        continue
                    if value is decisive:
                        return decisive
                    if value is not (not decisive):
                        error = error or rt.no_overload("predicate", value)
            finally:
                _restore(loc, var, saved)
            if error is not None:
                raise error
            return not decisive

        return quantifier

    return make


def _exists_one(var: str, over: Fn, pred: Fn, _t: Fn | None) -> Fn:
    def exists_one(g: Mapping[str, Any], loc: dict[str, Any]) -> bool:
        items = _elements(over(g, loc), loc)
        saved = loc.get(var, _UNSET)
        count = 0
        try:
            for item in items:
                loc[var] = item
                value = pred(g, loc)
                if value is True:
                    count += 1
                elif value is not False:
                    raise rt.no_overload("predicate", value)
        finally:
            _restore(loc, var, saved)
        return count == 1

    return exists_one


def _map(var: str, over: Fn, pred: Fn | None, transform: Fn | None) -> Fn:
    """map(x, t), map(x, p, t) and filter(x, p) (no transform: the element itself)."""

    def mapped(g: Mapping[str, Any], loc: dict[str, Any]) -> list[Any]:
        items = _elements(over(g, loc), loc)
        saved = loc.get(var, _UNSET)
        out = []
        try:
            for item in items:
                loc[var] = item
                if pred is not None:
                    keep = pred(g, loc)
                    if keep is False:
                        continue
                    if keep is not True:
                        raise rt.no_overload("predicate", keep)
                out.append(item if transform is None else transform(g, loc))
        finally:
            _restore(loc, var, saved)
        return out

    return mapped


def _restore(loc: dict[str, Any], var: str, saved: Any) -> None:
    if saved is _UNSET:
        loc.pop(var, None)
    else:
        loc[var] = saved


_COMPREHENSIONS: dict[str, Callable[..., Fn]] = {
    "all": _quantifier(True),
    "exists": _quantifier(False),
    "exists_one": _exists_one,
    "map": _map,
    "filter": _map,
}

__all__ = ["BUDGET", "CelCompileError", "CelError", "Program", "compile"]
