"""`name=value` and `name: value` pairs whose name marks the value secret, in any text.

Covers logfmt and klog (`password=x`, `"token"="x"`), flags (`--token=x`, `--password x`),
URL queries (`?sig=x&`), JSON (`"password": "x"`, also escaped inside a JSON string), YAML
lines (`  password: x y z # comment`, block scalars `key: |`), Go maps and structs
(`map[token:x]`, `{Password:x}`), HTTP headers (`X-Api-Key: x`), and Kubernetes env entries
written as JSON (`{"name": "TF_LICENSE", "value": "x"}`), YAML or a Go struct.

Precision: a name followed by ": " counts only in a field position (line start, after `{`,
`[`, `,`, `(`, or a YAML list dash), so that error chains such as `invalid token: expired`
and prose like `password field is empty` stay readable; header names count anywhere.
"""

from __future__ import annotations

import re

from .names import (
    HEADER_NAMES,
    NAME_CHARS,
    is_placeholder_value,
    prefixed_kind,
    sensitive_kind,
)
from .patterns import refine_kind
from .scan import Finder, Scan
from .spans import Hit

_KEY_RIGHT = re.compile(r"[A-Za-z0-9_.-]*")
_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESCAPED_STRING = re.compile(r'\\"((?:[^"\\\n]|\\[^"\n])*?)\\"')
_SINGLE_QUOTED = re.compile(r"'([^'\n]*)'")
_BACKTICK = re.compile(r"`([^`\n]*)`")
_JSON_ARRAY_FIRST = re.compile(r'\[[ \t]*"((?:[^"\\\n]|\\.)*)"')
_BRACKETED = re.compile(r"\[([^\]\n]*)\]")
_UNQUOTED = re.compile(r"[^\s\"'`,;&<>{}\[\]()\\]+")
_JSON_SCALAR = re.compile(r"[^\s,}\]\\]+")
_YAML_REST = re.compile(r"[^\n\r\\\"]*")
_BLOCK_INDICATOR = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?(?=\r?\n)")
_TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|negotiate|apikey)\s+(?=\S)")
_AUTH_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]+(?=\S)")  # RFC 9110 auth-scheme


def _pairs(scan: Scan) -> list[Hit]:
    text = scan.text
    seen: set[int] = set()
    hits: list[Hit] = []
    for pos in scan.keyword_positions:
        ks = pos
        while ks > 0 and text[ks - 1] in NAME_CHARS:
            ks -= 1
        if ks in seen:
            continue
        seen.add(ks)
        ke = _KEY_RIGHT.match(text, pos).end()
        hit = _pair_at(scan, ks, ke)
        if hit is not None:
            hits.append(hit._replace(name=(ks, ke)))
    return hits


def _skip_blanks(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    return i


def _field_position(text: str, qs: int) -> str | None:
    """'line' when the name starts its line (YAML, JSON), 'inline' after {[,(; or None."""
    i = qs - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i < 0 or text[i] in "\n\r":
        return "line"
    c = text[i]
    if c == "-" and (i == 0 or text[i - 1] in " \t\n"):
        return _field_position(text, i)  # a YAML list item: "- password: x"
    if c in "nrt" and i > 0 and text[i - 1] == "\\":
        return "line"  # an escaped newline inside a JSON string
    if c in "{[,(;|":
        return "inline"
    return None


# Assignment operators of build files and code (Go and Makefile `:=`, Makefile `::=` `?=`,
# `+=`, PHP `.=`, `=>` in PHP/Ruby/Perl maps), longest first. `=` and `:` are judged apart:
# `==` compares, `key: v` is a field only in a field position, Go's `map[key:v]` is tight.
_OPERATORS = ("::=", ":=", "?=", "+=", ".=", "=>")
# A declared type between the name and `=`: Go `var token string = "..."`, Kotlin/TypeScript
# `val token: String = "..."`, C `char *password = "..."`.
_TYPED = re.compile(
    r"(?::[ \t]*)?(?:\[\]byte|\[\]rune|&?str|string|String|char[ \t]*\*|SecretStr|Secret)"
    r"[ \t]*=(?![=>])"
)


def _pair_at(scan: Scan, ks: int, ke: int) -> Hit | None:
    text = scan.text
    key = text[ks:ke].strip(".-") if not text[ks:ke].startswith("-") else text[ks:ke].rstrip(".-")
    if not key:
        return None
    kind = sensitive_kind(key)
    if kind is not None and ks and text[ks - 1] == "/":
        kind = prefixed_kind(text, ks, ke)
    if kind is None:
        return None
    if text.startswith("${", ks - 2):
        return None  # a shell expansion, `${TOKEN:-default}` or `${TOKEN:=$2}`: no value here
    n = len(text)
    i = ke
    quoted = ""
    if text.startswith('\\"', i):
        quoted, i = '\\"', i + 2
    elif i < n and text[i] in "\"'":
        quoted, i = text[i], i + 1
        if text.startswith("]", i):
            i += 1  # a subscript: os.environ["API_TOKEN"] = "..."
    j = _skip_blanks(text, i)
    if j >= n:
        return None
    qs = ks - len(quoted) if quoted else ks
    sep = text[j]
    if quoted and sep == "," and _call_argument(text, qs, key):
        v = _skip_blanks(text, j + 1)  # setProperty("X_TOKEN", "...") or ["--token", "..."]
        if v < n and text[v] in "\"'`":
            return _value(scan, kind, v, "call", quoted, ks)
        return None
    if sep == ">" and not quoted and ks and text[ks - 1] == "<":
        return _element(scan, kind, key, j + 1)  # <password>...</password>
    if text.startswith(("||", "??"), j):
        # A default after a lookup, `process.env.API_KEY || 'sk-...'`, `$x ?? "..."`: the
        # literal is the value the code runs with when the variable is unset.
        v = _skip_blanks(text, j + 2)
        if v < n and text[v] in "\"'`":
            return _value(scan, kind, v, "call", "", ks)
        return None
    op = next((o for o in _OPERATORS if text.startswith(o, j)), None)
    if op is None and not quoted and not key.startswith("-"):
        typed = _TYPED.match(text, j)
        if typed is not None and (j > i or text[j] == ":"):
            op = text[j : typed.end()]
    if op is not None:
        v = _skip_blanks(text, j + len(op))
        if v >= n or text[v] in "\n\r":
            return None
        return _value(scan, kind, v, "eq", quoted, ks)
    if sep == "=":
        if text[j + 1 : j + 2] == "=":
            return None  # a comparison, not an assignment
        mode = "eq"
    elif sep == ":":
        nxt = text[j + 1 : j + 2]
        if nxt == ":" or text.startswith("//", j + 1):
            return None
        if nxt in (" ", "\t"):
            position = _field_position(text, qs)
            if position is None and qs and key.lower() in HEADER_NAMES and text[qs - 1] in "'\"":
                position = "inline"  # a quoted header: curl -H 'X-Api-Key: ...'
            if position is None:
                return _mid_line(scan, kind, qs, j + 1, key)
            mode = "line" if position == "line" else "inline"
        else:
            mode = "tight"
    elif j > i and key.startswith("-") and not quoted and text[j] not in "-\n\r":
        return _value(scan, kind, j, "flag", quoted, ks)  # --password hunter2
    else:
        return _env_value(scan, kind, ks, ke)
    v = _skip_blanks(text, j + 1)
    if v >= n or text[v] in "\n\r":
        return None
    return _value(scan, kind, v, mode, quoted, ks)


def _call_argument(text: str, qs: int, key: str) -> bool:
    """A quoted name that is a call's first argument, or a flag in a list of arguments."""
    i = qs - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i >= 0 and (text[i] == "(" or (key.startswith("-") and text[i] in "[,"))


def _mid_line(scan: Scan, kind: str, qs: int, after: int, key: str) -> Hit | None:
    """`name: value` after a log line's prefix or in a sentence: a value only if it looks
    generated, so that error chains (`invalid token: token is expired`) stay as they are."""
    text = scan.text
    v = _skip_blanks(text, after)
    if v < len(text) and text[v] in "\"'":
        if _closes_string(text, qs, v):
            return None  # `["Token: ", ""]`: the quote ends the string the name is in
        m = (_JSON_STRING if text[v] == '"' else _SINGLE_QUOTED).match(text, v)
        if m is not None and _looks_generated(m.group(1)):
            return _hit(scan, kind, m.start(1), m.end(1), m.group(1))
        return None
    if _authorization(key):
        found = _credentials(text, v)
        if found is not None:
            return found
    word = _UNQUOTED.match(text, v)
    if word is None or not _looks_generated(word.group()):
        return None
    return _hit(scan, kind, word.start(), word.end(), word.group())


def _authorization(key: str) -> bool:
    """An HTTP header that carries credentials after an auth-scheme (RFC 9110)."""
    return key.lower() in ("authorization", "proxy-authorization")


def _credentials(text: str, v: int) -> Hit | None:
    """An `Authorization:` header after a log prefix, `<scheme> <credentials>`: the scheme
    stays readable, the credentials go, whatever the scheme (Bearer, Basic, Digest's
    parameters, ApiKey, AWS4-HMAC-SHA256's Credential and Signature)."""
    m = _AUTH_SCHEME.match(text, v)
    if m is None:
        return None
    start = m.end()
    eol = text.find("\n", start)
    rest = text[start : len(text) if eol == -1 else eol].rstrip()
    # Inside a quoted string (`curl -H 'Authorization: ...' url`), the header ends with it.
    before = text[text.rfind("\n", 0, v) + 1 : v]
    for quote in "\"'":
        if before.count(quote) % 2 and quote in rest:
            rest = rest[: rest.index(quote)].rstrip()
    # Words after the header name (`missing Authorization: header required`) are no
    # credentials: some part of them must look generated.
    if (
        not rest
        or rest.startswith("<redacted:")
        or not any(
            _looks_generated(word) for word in re.split(r"[\s,=\"']+", rest) if len(word) >= 8
        )
    ):
        return None
    scheme = m.group(1).lower()
    if scheme in ("bearer", "basic"):
        token = _TOKEN68.match(rest)  # one token68 (RFC 7235); what follows is not it
        rest = token.group() if token is not None else rest
    kind = {"basic": "basic-auth", "bearer": "bearer-token", "token": "bearer-token"}
    return Hit(start, start + len(rest), kind.get(scheme, "auth"), 1)


def _element(scan: Scan, kind: str, key: str, v: int) -> Hit | None:
    """XML: the text of an element named like a secret, up to its closing tag; pretty-printed
    XML puts it on its own line between them."""
    text = scan.text
    close = text.find("</", v)
    if close == -1 or not text.startswith(key, close + 2):
        return None
    inner = text[v:close]
    value = inner.strip()
    if not value or "\n" in value or "<" in value:
        return None
    start = v + len(inner) - len(inner.lstrip())
    return _hit(scan, kind, start, start + len(value), value)


def _value(scan: Scan, kind: str, v: int, mode: str, quoted: str, ks: int) -> Hit | None:
    text = scan.text
    c = text[v]
    if not quoted and c in "\"'" and _closes_string(text, ks, v):
        return None  # `"password="`: an empty value at the end of a quoted string
    if text.startswith('\\"', v):
        m = _ESCAPED_STRING.match(text, v)
    elif c == '"':
        m = _JSON_STRING.match(text, v)
    elif c == "'":
        m = _SINGLE_QUOTED.match(text, v)
    elif c == "`":
        m = _BACKTICK.match(text, v)
    elif c == "[" and mode == "tight" and quoted != '"':  # Go's map[token:[x]], not JSON
        m = _BRACKETED.match(text, v)
    elif c == "[" and quoted == '"':  # a header map in JSON: "X-Api-Key": ["..."]
        m = _JSON_ARRAY_FIRST.match(text, v)
    elif c in "{[":
        return None  # a nested structure: the structured pass judges its members
    elif c in "|>" and mode == "line":
        return _block(scan, kind, v, ks)
    elif text.startswith(("${", "$("), v):
        return None  # a shell expansion or substitution names the value, it does not hold it
    else:
        m = None
        if mode == "line" and quoted != '"':
            rest = _YAML_REST.match(text, v)
            value = rest.group()
            cut = value.find(" #")
            if cut != -1:
                value = value[:cut]
            value = value.rstrip()
            return _hit(scan, kind, v, v + len(value), value, _key_at(text, ks))
        if _authorization(_key_at(text, ks)):
            found = _credentials(text, v)
            if found is not None:
                return found
        pattern = _JSON_SCALAR if quoted == '"' else _UNQUOTED
        m = pattern.match(text, v)
        if m is None or not m.group() or _is_reference(text, m):
            return None
        return _hit(scan, kind, m.start(), m.end(), m.group(), _key_at(text, ks))
    if m is None:
        return None
    return _hit(scan, kind, m.start(1), m.end(1), m.group(1), _key_at(text, ks))


def _key_at(text: str, ks: int) -> str:
    return _KEY_RIGHT.match(text, ks).group()


def _is_reference(text: str, m: re.Match[str]) -> bool:
    """Code that names the value rather than holds it: a call (`token := getToken(ctx)`) or a
    field named like a secret (`password := cfg.Password`, `api_key=settings.API_KEY`)."""
    if text.startswith("(", m.end()):
        return True
    parts = m.group().split(".")
    return (
        len(parts) > 1
        and all(p.isidentifier() for p in parts)
        and sensitive_kind(parts[-1]) is not None
    )


def _closes_string(text: str, ks: int, v: int) -> bool:
    """Whether the quote at `v`, after an unquoted `key=`, ends a string that holds the pair
    (`"msg": "password=", "b": 1`) rather than opening the value (`password="x y"`): the
    string opened right before the key, or what the quote would open does not end where a
    value ends. Taking it for a value would redact the JSON between two strings."""
    q = text[v]
    if ks and text[ks - 1] == q:
        return True
    close = text.find(q, v + 1)
    if close == -1:
        return True
    after = text[close + 1 : close + 2]
    # The other quote may end the string the pair sits in: `"msg":"export X='v'"`.
    other = '"' if q == "'" else "'"
    return not (after == "" or after.isspace() or after in ",;&)}]>" or after == other)


def _looks_generated(value: str) -> bool:
    """A digit, inner capitals or a symbol: a password or a key, not an English word or a path."""
    if value.startswith(("/", "./", "~/")):
        return False
    return (
        any(c.isdigit() for c in value)
        or any(c.isupper() for c in value[1:])
        or any(not c.isalnum() and c not in "-_./:" for c in value)
    )


def _block(scan: Scan, kind: str, v: int, ks: int) -> Hit | None:
    """A YAML block scalar (`key: |`): every more-indented line after it is the value."""
    text = scan.text
    if _BLOCK_INDICATOR.match(text, v) is None:
        return None
    line_start = text.rfind("\n", 0, ks) + 1
    indent = len(text[line_start:ks]) - len(text[line_start:ks].lstrip(" -"))
    pos = text.find("\n", v) + 1
    start = end = -1
    while 0 < pos < len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        line = text[pos:line_end]
        stripped = line.lstrip(" ")
        if stripped.strip():
            if len(line) - len(stripped) <= indent:
                break
            if start == -1:
                start = pos + len(line) - len(stripped)
            end = line_end
        if nl == -1:
            break
        pos = nl + 1
    if start == -1:
        return None
    return _hit(scan, kind, start, end, text[start:end])


# ExternalSecret's `secretKey: password` names a key of the Secret it makes; a credential
# under the same name (`cloudVendorCredentials.secretKey`) is generated, never words.
_KEY_NAME = re.compile(r"[a-z]+(?:[._-](?:[a-z]+|[0-9]+))*|[A-Z]+(?:_(?:[A-Z]+|[0-9]+))*")


def _hit(scan: Scan, kind: str, start: int, end: int, value: str, key: str = "") -> Hit | None:
    if is_placeholder_value(value) or value.startswith("<redacted:"):
        return None
    if key == "secretKey" and _KEY_NAME.fullmatch(value):
        return None
    scheme = _SCHEME.match(value)
    if scheme is not None:
        # "Bearer <token>": the scheme is diagnostic, the token is the secret.
        start += scheme.end()
        value = value[scheme.end() :]
        kind = "basic-auth" if scheme.group(1).lower() == "basic" else "bearer-token"
        if scheme.group(1).lower() in ("bearer", "basic"):
            # One token68 (RFC 7235): what follows it on the line is not the credential.
            token = _TOKEN68.match(value)
            if token is not None:
                value = token.group()
                end = start + len(value)
    if not value or (value.lower() in ("bearer", "basic", "token") and kind == "auth"):
        return None
    kind = refine_kind(kind, value)
    return Hit(start, end, kind, 1)


# --- Kubernetes env entries written out as text (kubectl output pasted into a log, a
# manifest file redacted offline): the sensitive name is the value of `name`, the secret the
# value of the `value` next to it. Found from the name (a keyword hit), so no extra pass.
_ENV_FORMS = (
    # JSON: {"name": "TF_LICENSE", "value": "..."}
    (re.compile(r'"name":\s*"$'), re.compile(r'",\s*"value":\s*"((?:[^"\\\n]|\\.)*)"')),
    # YAML: - name: TF_LICENSE\n  value: ...
    (
        re.compile(r"(?:^|\n)[ \t]*(?:-[ \t]+)?name:[ \t]*[\"']?$"),
        re.compile(r"[\"']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\n\r]*))"),
    ),
    # XML: <add key="ApiKey" value="..."/>, <property name="client.secret" value="..."/>
    (
        re.compile(r"\b(?:name|key)=[\"']$"),
        re.compile(r"[\"'][ \t]+value=(?:\"([^\"\n]*)\"|'([^'\n]*)')"),
    ),
    # Go: {Name:TF_LICENSE Value:... ValueFrom:nil}
    (re.compile(r"\bName:$"), re.compile(r",?\s+Value:([^\s,}]*)")),
)


def _env_value(scan: Scan, kind: str, ks: int, ke: int) -> Hit | None:
    text = scan.text
    before = text[max(0, ks - 40) : ks]
    for name_re, value_re in _ENV_FORMS:
        if name_re.search(before) is None:
            continue
        m = value_re.match(text, ke)
        if m is None:
            continue
        group = next((g for g in range(1, (m.lastindex or 1) + 1) if m.group(g) is not None), 1)
        value = m.group(group).rstrip()
        return _hit(scan, kind, m.start(group), m.start(group) + len(value), value)
    return None


FINDERS: tuple[Finder, ...] = (Finder("pairs", _pairs),)
