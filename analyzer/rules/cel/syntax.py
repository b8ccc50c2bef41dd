"""CEL source text to a syntax tree, following the grammar of the CEL specification
(github.com/google/cel-spec, doc/langdef.md): literals, lists, maps, member access, calls,
operators with CEL's precedence, the conditional, the macros `has`, `all`, `exists`,
`exists_one`, `map` and `filter`, and `cel.bind` from cel-go's extensions. Message
construction (`Type{field: ...}`) is not supported: rules only ever see JSON data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64  # nested brackets and calls; each level costs ~10 Python frames to parse
MAX_SOURCE = 100_000


class CelSyntaxError(ValueError):
    pass


# ------------------------------------------------------------------------ syntax tree


@dataclass(frozen=True, slots=True)
class Node:
    pass


@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: Any


@dataclass(frozen=True, slots=True)
class Ident(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Select(Node):
    operand: Node
    field: str
    test_only: bool = False  # has(a.b)


@dataclass(frozen=True, slots=True)
class Index(Node):
    operand: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Call(Node):
    function: str
    target: Node | None
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class ListExpr(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class MapExpr(Node):
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True, slots=True)
class Comprehension(Node):
    """`range.kind(var, predicate)`, or `range.map(var, predicate, transform)`."""

    kind: str  # all | exists | exists_one | map | filter
    range: Node
    var: str
    predicate: Node | None
    transform: Node | None


@dataclass(frozen=True, slots=True)
class Let(Node):
    """`cel.bind(var, value, body)` (cel-go's bindings extension): value computed once."""

    var: str
    value: Node
    body: Node


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # ! or -
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str  # && || == != < <= > >= in + - * / %
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Conditional(Node):
    condition: Node
    then: Node
    otherwise: Node


# ------------------------------------------------------------------------ lexer

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<float>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>\d+[uU]?)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
               |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)
RESERVED = frozenset(
    {"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let"}
    | {"loop", "package", "namespace", "return", "var", "void", "while"}
)
_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_ESCAPE = re.compile(
    r"\\(?:([abfnrtv\\'\"`?])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})"
    r"|U([0-9a-fA-F]{8})|([0-3][0-7]{2})|(.))",
    re.DOTALL,
)
INT64 = 2**63


# A token: (key, text, position, literal value). The key is the operator itself for an
# operator, else "ident", "literal" or "end": the parser asks one question of each token,
# "is its key this?".
Token = tuple[str, str, int, Any]
_KEYWORD_KEYS = {"true": ("literal", True), "false": ("literal", False), "null": ("literal", None)}


def tokenize(source: str) -> list[Token]:
    if len(source) > MAX_SOURCE:
        raise CelSyntaxError(f"expression longer than {MAX_SOURCE} characters")
    tokens: list[Token] = []
    append = tokens.append
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup
        if kind == "ws":
            continue
        text = m.group()
        if kind == "ident":
            if text in _KEYWORD_KEYS:
                key, value = _KEYWORD_KEYS[text]
                append((key, text, m.start(), value))
            elif text == "in":
                append(("in", text, m.start(), None))
            else:
                append(("ident", text, m.start(), None))
        elif kind == "op":
            append((text, text, m.start(), None))
        elif kind == "bad":
            raise CelSyntaxError(f"unexpected character {text!r} at {m.start()}")
        else:
            append(("literal", text, m.start(), _literal(kind or "", text, m.start())))
    tokens.append(("end", "", len(source), None))
    return tokens


def _literal(kind: str, text: str, pos: int) -> Any:
    if kind == "float":
        return float(text)
    if kind in ("int", "hex"):
        unsigned = text[-1] in "uU"
        digits = text[:-1] if unsigned else text
        value = int(digits, 16 if kind == "hex" else 10)
        # Unsigned literals are plain ints here; 2**63 itself is valid only negated.
        if value > INT64 or (unsigned and value == INT64):
            raise CelSyntaxError(f"integer literal out of range at {pos}: {text}")
        return value
    return _string(text, pos)


def _string(text: str, pos: int) -> str | bytes:
    prefix = ""
    while text[0] in "rRbB":
        prefix += text[0].lower()
        text = text[1:]
    quote = 3 if text[:3] in ('"""', "'''") else 1
    body = text[quote:-quote]
    raw, as_bytes = "r" in prefix, "b" in prefix
    if not as_bytes:
        return body if raw else _ESCAPE.sub(lambda m: _unescape(m, pos, False), body)
    if raw:
        return body.encode()
    # In bytes literals \x and octal escapes name bytes; other characters are UTF-8.
    out = bytearray()
    last = 0
    for m in _ESCAPE.finditer(body):
        out += body[last : m.start()].encode()
        hex2, octal = m.group(2), m.group(5)
        if hex2 or octal:
            out.append(int(hex2, 16) if hex2 else int(octal, 8))
        else:
            out += _unescape(m, pos, True).encode()
        last = m.end()
    out += body[last:].encode()
    return bytes(out)


def _unescape(m: re.Match[str], pos: int, as_bytes: bool) -> str:
    simple, hex2, hex4, hex8, octal, bad = m.groups()
    if simple:
        return _ESCAPES[simple]
    if bad is not None:
        raise CelSyntaxError(f"invalid escape \\{bad} in string at {pos}")
    if (hex4 or hex8) and as_bytes:
        raise CelSyntaxError(f"\\u escape in a bytes literal at {pos}")
    code = int(hex2 or hex4 or hex8, 16) if not octal else int(octal, 8)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise CelSyntaxError(f"invalid code point in string at {pos}")
    return chr(code)


# ------------------------------------------------------------------------ parser

_MACROS = {"all": 2, "exists": 2, "exists_one": 2, "filter": 2}
# Binary operators by how tightly they bind; all associate to the left. One loop climbs
# them (precedence climbing).
_PRECEDENCE = {
    "||": 1,
    "&&": 2,
    **dict.fromkeys(("==", "!=", "<", "<=", ">", ">=", "in"), 3),
    **dict.fromkeys(("+", "-"), 4),
    **dict.fromkeys(("*", "/", "%"), 5),
}


def parse(source: str) -> Node:
    return _Parser(tokenize(source)).parse()


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.keys = [tok[0] for tok in tokens]
        self.pos = 0
        self.depth = 0

    # -- helpers
    def next(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def expect(self, op: str) -> Token:
        tok = self.next()
        if tok[0] != op:
            raise CelSyntaxError(f"expected {op!r} at {tok[2]}, found {_show(tok)}")
        return tok

    def parse(self) -> Node:
        node = self.expr()
        tok = self.tokens[self.pos]
        if tok[0] != "end":
            raise CelSyntaxError(f"unexpected {_show(tok)} at {tok[2]}")
        return node

    # -- grammar, loosest binding first
    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CelSyntaxError(f"expression nested deeper than {MAX_DEPTH}")
        node = self.binary(1)
        if self.keys[self.pos] == "?":
            self.pos += 1
            then = self.binary(1)
            self.expect(":")
            node = Conditional(node, then, self.expr())
        self.depth -= 1
        return node

    def binary(self, tightest: int) -> Node:
        """Operands joined by operators binding at least as tightly as `tightest`."""
        node = self.unary()
        keys = self.keys
        while True:
            op = keys[self.pos]
            level = _PRECEDENCE.get(op)
            if level is None or level < tightest:
                return node
            self.pos += 1
            node = Binary(op, node, self.binary(level + 1))

    def unary(self) -> Node:
        key = self.keys[self.pos]
        if key == "!" or key == "-":
            ops: list[str] = []
            while key == "!" or key == "-":
                self.pos += 1
                if ops and ops[-1] == key:  # `!!x` is x, `--x` is x, as in cel-go
                    ops.pop()
                else:
                    ops.append(key)
                key = self.keys[self.pos]
            tok = self.tokens[self.pos]
            if ops and ops[-1] == "-" and key == "literal" and _is_int(tok[3]):
                # -9223372036854775808 is a valid literal although its magnitude is not.
                self.pos += 1
                node: Node = Literal(-tok[3])
                ops.pop()
            else:
                node = self.member()
            for op in reversed(ops):
                node = Unary(op, node)
            return node
        node = self.member()
        if isinstance(node, Literal) and _is_int(node.value) and node.value >= INT64:
            raise CelSyntaxError("integer literal out of range")
        return node

    def member(self) -> Node:
        node = self.primary()
        keys = self.keys
        while True:
            key = keys[self.pos]
            if key == ".":
                self.pos += 1
                name = self.ident(field=True)
                if keys[self.pos] == "(":
                    node = self.call(name, node, self.arguments())
                else:
                    node = Select(node, name)
            elif key == "[":
                self.pos += 1
                node = Index(node, self.expr())
                self.expect("]")
            elif key == "{":
                raise CelSyntaxError(
                    f"message construction is not supported (at {self.tokens[self.pos][2]})"
                )
            else:
                return node

    def primary(self) -> Node:
        tok = self.next()
        key = tok[0]
        if key == "literal":
            return Literal(tok[3])
        if key == "ident" or key == ".":
            name = tok[1] if key == "ident" else "." + self.ident()
            _check_ident(name, tok[2])
            if self.keys[self.pos] == "(":
                return self.call(name, None, self.arguments())
            return Ident(name)
        if key == "(":
            node = self.expr()
            self.expect(")")
            return node
        if key == "[":
            return ListExpr(tuple(self.sequence("]", self.expr)))
        if key == "{":
            return MapExpr(tuple(self.sequence("}", self.entry)))
        raise CelSyntaxError(f"unexpected {_show(tok)} at {tok[2]}")

    def entry(self) -> tuple[Node, Node]:
        key = self.expr()
        self.expect(":")
        return key, self.expr()

    def sequence(self, close: str, item: Any) -> list[Any]:
        items: list[Any] = []
        keys = self.keys
        while keys[self.pos] != close:
            items.append(item())
            if keys[self.pos] != ",":
                break
            self.pos += 1
        self.expect(close)
        return items

    def arguments(self) -> list[Node]:
        self.expect("(")
        return self.sequence(")", self.expr)

    def ident(self, field: bool = False) -> str:
        tok = self.next()
        if tok[0] != "ident":
            raise CelSyntaxError(f"expected a name at {tok[2]}, found {_show(tok)}")
        if not field:  # `metadata.namespace` is fine: only names may not be reserved words
            _check_ident(tok[1], tok[2])
        return tok[1]

    def call(self, name: str, target: Node | None, args: list[Node]) -> Node:
        if target is None and name == "has":
            if len(args) != 1 or not isinstance(args[0], Select):
                raise CelSyntaxError("has() takes one field selection, like has(a.b)")
            arg = args[0]
            return Select(arg.operand, arg.field, test_only=True)
        if name == "bind" and isinstance(target, Ident) and target.name == "cel":
            if len(args) != 3 or not isinstance(args[0], Ident) or args[0].name.startswith("."):
                raise CelSyntaxError("cel.bind() takes a simple name, a value and an expression")
            return Let(args[0].name, args[1], args[2])
        if target is not None and (name in _MACROS or name == "map"):
            wanted = (2, 3) if name == "map" else (_MACROS[name],)
            if len(args) not in wanted:
                raise CelSyntaxError(f"{name}() takes {' or '.join(map(str, wanted))} arguments")
            var = args[0]
            if not isinstance(var, Ident) or var.name.startswith("."):
                raise CelSyntaxError(f"{name}(): the first argument must be a simple name")
            if name == "map":
                predicate = args[1] if len(args) == 3 else None
                return Comprehension("map", target, var.name, predicate, args[-1])
            return Comprehension(name, target, var.name, args[1], None)
        return Call(name, target, tuple(args))


def _check_ident(name: str, pos: int) -> None:
    if name.lstrip(".") in RESERVED:
        raise CelSyntaxError(f"reserved word {name!r} used as a name at {pos}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(tok: Token) -> str:
    return "end of expression" if tok[0] == "end" else repr(tok[1])
