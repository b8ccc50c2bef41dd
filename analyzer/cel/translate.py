"""A checked CEL expression translated into the source of one Python function.

program.py's closures are the reference: this gives the same value or the same error for
every expression, in fewer steps. Every sub-expression becomes statements assigning a local
(no call per node), comprehension variables are Python locals, `a.b.c` is one subscript
chain, and host functions that declare a fast path (`subscripts`) are inlined as lookups
that fall back to the call wherever the lookup does not apply. A rule's condition runs once
per subject, 10,000 times on a large cluster: this is where that time goes.

Errors follow program.py: `&&`, `||`, `all` and `exists` absorb an error when another operand
decides, everything else raises it where it happens.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from . import runtime as rt
from .runtime import CelError
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
)
from .tree import (
    ARITHMETIC,
    NOT_CONSTANT,
    ORDER,
    boolean,
    constant,
    operands,
    strict_variables,
    string_constants,
)

# A host function's fast path, given the call's literal arguments after the first: the keys
# that `first[k1][k2]...` reads to give the function's own result, the function's result
# wherever that chain misses (a key not there, a step that is no map), and whether a value
# found counts only when it is a string (else the function is called); None: no fast path.
Subscripts = Callable[..., tuple[tuple[Any, ...], Any, bool] | None]
Translated = Callable[[Mapping[str, Any], int], Any]

_MISSES = "(KeyError, TypeError, IndexError)"  # what a subscript chain raises off the fast path


def remembered(table: dict[str, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare that a one-argument host function keeps its result for a string argument in
    `table` (a hit there is its result): the translation looks there before calling it."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__dict__["cel_table"] = table
        return fn

    return mark


def subscripts(lookup: Subscripts) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a host function's fast path (see `Subscripts`)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__dict__["cel_subscripts"] = lookup
        return fn

    return mark


def translate(tree: Node, host: Mapping[str, Callable[..., Any]]) -> Translated | None:
    """The expression as a Python function (variables, budget) -> value, or None where
    Python's own compiler refuses it (blocks nested past its limits): the closures serve."""
    out = _Translator(host)
    try:
        result = out.node(tree, {})
        unset = "".join(f"    {local} = UNSET\n" for local in out.reads.values())
        source = "def cel(g, steps):\n" + unset + "".join(out.lines) + f"    return {result}\n"
        namespace = dict(out.names)
        with warnings.catch_warnings():  # `1 is True` in generated tests is meant
            warnings.simplefilter("ignore")
            code = compile(source, "<cel>", "exec")
        exec(code, namespace)  # our own generated code, from a checked tree
    except (SyntaxError, RecursionError, MemoryError):
        return None
    fn: Translated = namespace["cel"]
    return fn


class _Failed:
    """A variable whose lookup raised: each later read raises the same, without asking the
    host again (a subject's data that was not collected is read five times in a rule)."""

    __slots__ = ("error",)

    def __init__(self, exc: Exception, name: str) -> None:
        undeclared = type(exc) is KeyError
        # Without its traceback: that holds this frame, which holds this (a cycle per subject
        # only the collector would free; 100,000 of them on a 10,000-pod bundle).
        self.error = CelError(f"undeclared reference to {name!r}") if undeclared else exc
        self.error.__traceback__ = None


_UNSET = object()


def _read(variables: Mapping[str, Any], name: str) -> Any:
    """A free variable's value, or its failed lookup."""
    try:
        return variables[name]
    except Exception as exc:
        return _Failed(exc, name)


def _has_failed(field: str, value: Any) -> CelError:
    return CelError(f"has(): no field {field!r} on {rt.type_name(value)}")


def _map_key(key: Any, out: dict[Any, Any]) -> None:
    if type(key) not in (str, int, bool):
        raise CelError(f"unsupported map key type {rt.type_name(key)}")
    if key in out:
        raise CelError(f"repeated map key {key!r}")


_STRING_TESTS = {"contains": "{lit} in {x}", "startsWith": "{x}.startswith({lit})"}
_STRING_TESTS["endsWith"] = "{x}.endswith({lit})"


class _Translator:
    def __init__(self, host: Mapping[str, Callable[..., Any]]) -> None:
        self.host = host
        self.lines: list[str] = []
        self.depth = 1
        self.count = 0
        self.reads: dict[str, str] = {}  # free variable -> the local that keeps it
        self.names: dict[str, Any] = {
            "Failed": _Failed,
            "UNSET": _UNSET,
            "read": _read,
            "has_failed": _has_failed,
            "map_key": _map_key,
            "over_budget": rt.over_budget,
            "no_overload": rt.no_overload,
            "equal": rt.equal,
            "compare": rt.compare,
            "select": rt.select,
            "index": rt.index,
            "elements": rt.elements,
            "negate": rt.negate,
        }

    # -- output
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line + "\n")

    def temp(self, prefix: str = "t") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def local(self, name: str) -> str:
        """The local that keeps a free variable's value for the evaluation."""
        return self.reads.setdefault(name, f"r{len(self.reads)}")

    def const(self, value: Any) -> str:
        """A name in the function's namespace for a value that is no plain literal."""
        name = self.temp("k")
        self.names[name] = value
        return name

    def literal(self, value: Any) -> str:
        if value is None or type(value) in (bool, int, str, bytes):
            return repr(value)
        if type(value) is float and math.isfinite(value):
            return repr(value)
        return self.const(value)

    def block(self, line: str) -> _Block:
        self.emit(line)
        return _Block(self)

    # -- nodes: each emits statements and returns an expression without side effects (a
    # local, a name or a literal) that holds the node's value after them
    def node(self, node: Node, scope: dict[str, str]) -> str:
        method: Callable[[Any, dict[str, str]], str] = getattr(self, "_" + type(node).__name__)
        return method(node, scope)

    def _Literal(self, node: Literal, scope: dict[str, str]) -> str:
        return self.literal(node.value)

    def _Ident(self, node: Ident, scope: dict[str, str]) -> str:
        if node.name in scope:
            return scope[node.name]
        # Read once per evaluation, where it is first needed (the host may look a subject's
        # data up only then), and kept in a local for every later read.
        name = node.name.lstrip(".")
        local = self.local(name)
        # Two lines per read, not seven: the source of a rule's condition reads its subject
        # ten times over, and compiling it is most of what translating costs. A name the
        # variables hold is read in place; any other asks the host (which may not have it).
        self.emit(
            f"if {local} is UNSET: {local} = g[{name!r}] if {name!r} in g else read(g, {name!r})"
        )
        self.emit(f"if type({local}) is Failed: raise {local}.error.with_traceback(None)")
        return local

    def _ListExpr(self, node: ListExpr, scope: dict[str, str]) -> str:
        if all(isinstance(i, Literal) for i in node.items):
            return self.const([i.value for i in node.items])  # type: ignore[attr-defined]
        items = [self.node(i, scope) for i in node.items]
        t = self.temp()
        self.emit(f"{t} = [{', '.join(items)}]")
        return t

    def _MapExpr(self, node: MapExpr, scope: dict[str, str]) -> str:
        t = self.temp()
        self.emit(f"{t} = {{}}")
        for k, v in node.entries:
            key = self.node(k, scope)
            self.emit(f"map_key({key}, {t})")
            value = self.node(v, scope)
            self.emit(f"{t}[{key}] = {value}")
        return t

    def _Select(self, node: Select, scope: dict[str, str]) -> str:
        t = self.temp()
        if node.test_only:
            value = self.node(node.operand, scope)
            with self.block(f"if isinstance({value}, dict):"):
                self.emit(f"{t} = {node.field!r} in {value}")
            with self.block("else:"):
                self.emit(f"raise has_failed({node.field!r}, {value})")
            return t
        base, path = node.operand, [node.field]
        while isinstance(base, Select) and not base.test_only:
            path.insert(0, base.field)
            base = base.operand
        start = self.node(base, scope)
        # Only a map answers a field name (a list or string raises TypeError on one): the
        # chain gives rt.select's value, and where it misses, rt.select gives its error.
        with self.block("try:"):
            self.emit(f"{t} = {start}{''.join(f'[{f!r}]' for f in path)}")
        with self.block(f"except {_MISSES}:"):
            self.emit(f"{t} = select({start}, {tuple(path)!r})")
        return t

    def _Index(self, node: Index, scope: dict[str, str]) -> str:
        value, key = self.node(node.operand, scope), self.node(node.index, scope)
        t = self.temp()
        self.emit(f"{t} = index({value}, {key})")
        return t

    def _Call(self, node: Call, scope: dict[str, str]) -> str:
        name = node.function.lstrip(".")
        t = self.temp()
        if node.target is not None:
            fn = self.const(rt.MEMBER[name])
            target = self.node(node.target, scope)
            arg = node.args[0] if len(node.args) == 1 else None
            if name in _STRING_TESTS and isinstance(arg, Literal) and type(arg.value) is str:
                test = _STRING_TESTS[name].format(x=target, lit=repr(arg.value))
                self.emit(
                    f"{t} = {test} if type({target}) is str else {fn}({target}, {arg.value!r})"
                )
                return t
            args = [target] + [self.node(a, scope) for a in node.args]
            self.emit(f"{t} = {fn}({', '.join(args)})")
            return t
        host = self.host.get(name)
        args = [self.node(a, scope) for a in node.args]
        if host is None:
            self.emit(f"{t} = {self.const(rt.GLOBAL[name])}({', '.join(args)})")
            return t
        fn = self.const(rt.host_function(name, host))
        table = getattr(host, "cel_table", None)
        if table is not None and len(args) == 1:
            self.emit(
                f"{t} = {self.const(table)}.get({args[0]}) if type({args[0]}) is str else None"
            )
            with self.block(f"if {t} is None:"):
                self._host_call(t, name, fn, args)
            return t
        fast = None
        lookup = getattr(host, "cel_subscripts", None)
        rest = [constant(a) for a in node.args[1:]]
        if lookup is not None and args and all(c is not NOT_CONSTANT for c in rest):
            fast = lookup(*rest)
        if fast is None:
            self._host_call(t, name, fn, args)
            return t
        keys, missed, text_only = fast
        with self.block("try:"):
            self.emit(f"{t} = {args[0]}{''.join(f'[{self.literal(k)}]' for k in keys)}")
        with self.block(f"except {_MISSES}:"):
            self.emit(f"{t} = {self.literal(missed)}")
        if text_only:
            # A miss gives a string too (else it could not stand for the function's result).
            with self.block(f"if type({t}) is not str:"):
                self._host_call(t, name, fn, args)
        return t

    def _host_call(self, t: str, name: str, fn: str, args: list[str]) -> None:
        self.emit(f"{t} = {fn}({', '.join(args)})")

    def _Unary(self, node: Unary, scope: dict[str, str]) -> str:
        value, t = self.node(node.operand, scope), self.temp()
        if node.op == "-":
            self.emit(f"{t} = negate({value})")
            return t
        with self.block(f"if {value} is True or {value} is False:"):
            self.emit(f"{t} = not {value}")
        with self.block("else:"):
            self.emit(f'raise no_overload("!_", {value})')
        return t

    def _Binary(self, node: Binary, scope: dict[str, str]) -> str:
        if node.op in ("&&", "||"):
            return self._logical(node, scope)
        left = self.node(node.left, scope)
        t = self.temp()
        right_literal = node.right.value if isinstance(node.right, Literal) else None
        if node.op in ("==", "!=") and type(right_literal) is str:
            const, op = repr(right_literal), node.op
            neg = "not " if op == "!=" else ""
            self.emit(
                f"{t} = ({left} {op} {const}) if type({left}) is str "
                f"else {neg}equal({left}, {const})"
            )
            return t
        if node.op == "in" and string_constants(node.right):
            items = [i.value for i in node.right.items]  # type: ignore[attr-defined]
            names, listed = self.const(frozenset(items)), self.const(items)
            contained = self.const(rt.contained)
            self.emit(
                f"{t} = ({left} in {names}) if type({left}) is str else {contained}({left}, {listed})"
            )
            return t
        right = self.node(node.right, scope)
        if node.op in ("==", "!="):
            neg = "not " if node.op == "!=" else ""
            self.emit(
                f"{t} = ({left} {node.op} {right}) if type({left}) is str and type({right}) is str"
                f" else {neg}equal({left}, {right})"
            )
        elif node.op in ORDER:
            test = self.const(ORDER[node.op])
            same = f"type({left}) is type({right}) and type({left}) in (int, str)"
            with self.block(f"if {same}:"):
                self.emit(f"{t} = {left} {node.op} {right}")
            with self.block("else:"):
                self.emit(f'{t} = bool({test}(compare("_{node.op}_", {left}, {right})))')
        else:
            self.emit(f"{t} = {self.const(ARITHMETIC[node.op])}({left}, {right})")
        return t

    def _logical(self, node: Binary, scope: dict[str, str]) -> str:
        """The first operand that decides (false for &&, true for ||) is the value, whatever
        errors the others raise; with none deciding, the first error in order is raised."""
        decisive = node.op == "||"
        t, error = self.temp(), self.temp("e")
        self.emit(f"{error} = None")
        self.emit(f"{t} = {not decisive}")
        for i, operand in enumerate(operands(node, node.op)):
            guard = self.block(f"if {t} is {not decisive}:") if i else None
            # An operand that must read a variable whose read failed would only raise again
            # (its error comes after the one kept): not evaluated, as not decisive.
            failed = [
                f"type({self.local(name)}) is Failed"
                for name in sorted(strict_variables(operand, frozenset(scope)))
            ]
            skip = (
                self.block(f"if {error} is None or not ({' or '.join(failed)}):")
                if i and failed
                else None
            )
            with self.block("try:"):
                value = self.node(operand, scope)
            with self.block("except Exception as exc:"):
                self.emit("exc.__traceback__ = None")  # it holds this frame, which would hold it
                self.emit(f"{error} = {error} or exc")
            with self.block("else:"):
                with self.block(f"if {value} is {decisive}:"):
                    self.emit(f"{t} = {decisive}")
                if not boolean(operand):
                    with self.block(f"elif {value} is not {not decisive}:"):
                        self.emit(f'{error} = {error} or no_overload("_{node.op}_", {value})')
            if skip is not None:
                skip.close()
            if guard is not None:
                guard.close()
        with self.block(f"if {t} is {not decisive} and {error} is not None:"):
            self.emit(f"raise {error}")
        return t

    def _Conditional(self, node: Conditional, scope: dict[str, str]) -> str:
        cond, t = self.node(node.condition, scope), self.temp()
        with self.block(f"if {cond} is True:"):
            self.emit(f"{t} = {self.node(node.then, scope)}")
        with self.block(f"elif {cond} is False:"):
            self.emit(f"{t} = {self.node(node.otherwise, scope)}")
        with self.block("else:"):
            self.emit(f'raise no_overload("_?_:_", {cond})')
        return t

    def _Let(self, node: Let, scope: dict[str, str]) -> str:
        value, local = self.node(node.value, scope), self.temp("v")
        self.emit(f"{local} = {value}")
        return self.node(node.body, {**scope, node.var: local})

    def _Comprehension(self, node: Comprehension, scope: dict[str, str]) -> str:
        over = self.node(node.range, scope)
        items, var, t = self.temp("i"), self.temp("v"), self.temp()
        self.emit(f"{items} = elements({over})")
        self.emit(f"steps -= len({items})")
        with self.block("if steps < 0:"):
            self.emit("raise over_budget()")
        inner = {**scope, node.var: var}
        if node.kind in ("all", "exists"):
            self._quantifier(node, items, var, t, inner)
        elif node.kind == "exists_one":
            self.emit(f"{t} = 0")
            with self.block(f"for {var} in {items}:"):
                value = self.node(node.predicate, inner)  # type: ignore[arg-type]
                with self.block(f"if {value} is True:"):
                    self.emit(f"{t} += 1")
                with self.block(f"elif {value} is not False:"):
                    self.emit(f'raise no_overload("predicate", {value})')
            self.emit(f"{t} = {t} == 1")
        else:  # map(x, t), map(x, p, t), filter(x, p)
            self.emit(f"{t} = []")
            with self.block(f"for {var} in {items}:"):
                if node.predicate is not None:
                    keep = self.node(node.predicate, inner)
                    with self.block(f"if {keep} is False:"):
                        self.emit("continue")
                    with self.block(f"if {keep} is not True:"):
                        self.emit(f'raise no_overload("predicate", {keep})')
                item = var if node.transform is None else self.node(node.transform, inner)
                self.emit(f"{t}.append({item})")
        return t

    def _quantifier(
        self, node: Comprehension, items: str, var: str, t: str, inner: dict[str, str]
    ) -> None:
        decisive = node.kind == "exists"  # exists stops at true, all at false
        error = self.temp("e")
        self.emit(f"{error} = None")
        self.emit(f"{t} = {not decisive}")
        with self.block(f"for {var} in {items}:"):
            with self.block("try:"):
                value = self.node(node.predicate, inner)  # type: ignore[arg-type]
            with self.block("except Exception as exc:"):
                self.emit("exc.__traceback__ = None")  # it holds this frame, which would hold it
                self.emit(f"{error} = {error} or exc")
                self.emit("continue")
            with self.block(f"if {value} is {decisive}:"):
                self.emit(f"{t} = {decisive}")
                self.emit("break")
            if not boolean(node.predicate):  # type: ignore[arg-type]
                with self.block(f"if {value} is not {not decisive}:"):
                    self.emit(f'{error} = {error} or no_overload("predicate", {value})')
        with self.block(f"if {t} is {not decisive} and {error} is not None:"):
            self.emit(f"raise {error}")


class _Block:
    """An indented block of the output, closed on leaving `with` (or by `close`)."""

    def __init__(self, out: _Translator) -> None:
        self.out = out
        self.start = len(out.lines)
        out.depth += 1

    def __enter__(self) -> _Block:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if len(self.out.lines) == self.start:
            self.out.emit("pass")
        self.out.depth -= 1
