"""Pattern finders for secrets in any text: each finds spans, the pseudonyms name them.

Every pattern starts with a literal (`eyJ` for a JWT, `ghp_` for a GitHub token, ...) and
boundaries are checked on the matches: `re` searches a literal prefix with a fast scan but
tries a leading look-behind at every position.
Shapes come first (a JWT is a JWT wherever it is); pairs (`password=...`) are in pairs.py.
"""

from __future__ import annotations

import base64
import binascii
import re
import string

from tf_support_schemas.tokens import (
    BEARER,
    FORMATS,
    PEM,
    STANDALONE,
    Scanner,
    TokenFormat,
    bearer_token,
    left_free,
)

from .scan import Finder, Scan
from .spans import Hit

# --- PEM private keys: multi-line, or with the newlines escaped inside JSON strings.
_PEM_BEGIN = PEM.pattern
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# When the END line is missing (a truncated log), the key body runs as far as base64 does.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=\s]|\\[nrt]|(?:Proc-Type|DEK-Info):[^\n\\]*)*")
_PEM_MAX = 64 * 1024


def _pem(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    pos = 0
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return hits
        end = _PEM_END.search(text, begin.end(), begin.end() + _PEM_MAX)
        stop = end.end() if end else _PEM_BODY.match(text, begin.end()).end()
        # One key, one placeholder: a key inside a JSON string has its newlines escaped.
        original = _unescape(text[begin.start() : stop])
        hits.append(Hit(begin.start(), stop, "private-key", 2, value=original))
        pos = stop


_ESCAPES = {"\\n": "\n", "\\r": "\r", "\\t": "\t"}


def _unescape(pem: str) -> str:
    return re.sub(r"\\[nrt]", lambda m: _ESCAPES[m.group()], pem) if "\\" in pem else pem


# --- token shapes: every standalone format of the catalogue (tf_support_schemas.tokens), which
# the analyzer's leak scan reads too. The PEM header is left to _pem, which takes the body.
_SHAPES = Scanner(tuple(f for f in STANDALONE if f is not PEM))
_WORD = frozenset(string.ascii_letters + string.digits + "_")


def _shapes(scan: Scan) -> list[Hit]:
    hits = []
    text = scan.text
    for found in _SHAPES.find(text):
        kind = found.format.kind
        hits.append(Hit(found.start, found.end, kind, 2))
        if kind == "aws-access-key-id":
            pair = _AWS_SECRET_AFTER.match(text, found.end)
            if pair is not None:
                hits.append(_hit(pair, "aws-secret-access-key", 2, group=1))
    return hits


# kubeadm bootstrap tokens (`abcdef.0123456789abcdef`): the bare shape is kept out of file and
# host names by its boundaries and by needing a digit; a token named as such needs neither.
_KUBEADM = re.compile(r"\.[a-z0-9]{16}(?![A-Za-z0-9_.\-/])")
_KUBEADM_HEAD = re.compile(r"[a-z0-9]{6}")
_KUBEADM_LEFT = frozenset(string.ascii_letters + string.digits + "_.-/")
_KUBEADM_CONTEXT = re.compile(r"(?i)(?:token|join|bootstrap)")


def _kubeadm(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    for m in _KUBEADM.finditer(text):
        start = m.start() - 6
        if start < 0 or not _KUBEADM_HEAD.fullmatch(text, start, m.start()):
            continue
        if not left_free(text, start, _KUBEADM_LEFT):
            continue
        token = text[start : m.end()]
        if any(c.isdigit() for c in token) or _KUBEADM_CONTEXT.search(
            text, max(0, start - 40), start
        ):
            hits.append(Hit(start, m.end(), "kubeadm-token", 2))
    return hits


# --- an AWS secret access key right after its key id (credentials CSV, `aws configure list`).
_AWS_SECRET_AFTER = re.compile(r"[\s,;:|\"'=]{1,6}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


# --- Authorization header values, wherever they appear (headers, Go maps, curl -H). "Bearer"
# by the catalogue's rule (tokens.BEARER, the leak scan's too); "Basic" and "Token" are
# ordinary words, so they count only right after an Authorization name (found by its keyword,
# "auth").
_BEARER = re.compile(BEARER)
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]{8,}=*(?![A-Za-z0-9._~+/=-])")
_AUTHORIZATION = re.compile(r"(?:proxy-)?authorization[\"']?\s*[:=]?\s*[\[\"']?\s*(basic|token)\s+")


def _bearer(scan: Scan) -> list[Hit]:
    hits, text, lower = [], scan.text, scan.lower
    # The word is found in the lowered text (a substring search), the rule matched there.
    pos = lower.find("bearer")
    while pos != -1:
        m = _BEARER.match(text, pos)
        pos = lower.find("bearer", pos + 6)
        if m is None or not bearer_token(m.group(1)):
            continue
        token = m.group(1)
        kind = "jwt" if token.startswith("eyJ") and token.count(".") >= 2 else "bearer-token"
        hits.append(Hit(m.start(1), m.end(1), kind, 2))
    for pos in scan.keyword_positions:
        if not lower.startswith("auth", pos):
            continue
        start = pos - 6 if lower.startswith("proxy-", pos - 6) else pos
        m = _AUTHORIZATION.match(lower, start)
        if m is None:
            continue
        t = _TOKEN.match(text, m.end())
        if t is not None:
            kind = "basic-auth" if m.group(1) == "basic" else "bearer-token"
            hits.append(Hit(t.start(), t.end(), kind, 2))
    return hits


# --- scheme://user:password@host (the user stays: it helps and it is rarely secret).
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@\"'<>\[\]]*:([^\s/?#\"'<>]+)@(?=[A-Za-z0-9\[])")


def _url_credentials(scan: Scan) -> list[Hit]:
    hits = []
    for m in _URL_CREDENTIALS.finditer(scan.text):
        if not m.group(1).startswith("<redacted:"):
            hits.append(_hit(m, "password", 2, group=1))
    return hits


# --- NVIDIA NGC: `docker login nvcr.io -u '$oauthtoken' -p <key>`. Personal keys in the
# current format are the `nvapi-` shape; legacy keys (base64 of "<26 chars>:<uuid>") have no
# shape of their own and are found by their names (NGC_API_KEY, --password) and by value_kind.
_NGC_LOGIN = re.compile(r"\$oauthtoken['\"]?\s+(?:-p|--password)[ =]['\"]?([^\s'\"]+)")
_NGC_LEGACY = re.compile(r"[A-Za-z0-9+/]{84}")
_NGC_DECODED = re.compile(
    rb"[a-z0-9]{20,32}:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _ngc(scan: Scan) -> list[Hit]:
    return [_hit(m, "ngc-key", 2, group=1) for m in _NGC_LOGIN.finditer(scan.text)]


def _is_legacy_ngc(value: str) -> bool:
    if not _NGC_LEGACY.fullmatch(value):
        return False
    try:
        return _NGC_DECODED.fullmatch(base64.b64decode(value)) is not None
    except (binascii.Error, ValueError):
        return False


# --- what a value is, by its shape alone (used for values found under sensitive names, so
# the same secret gets the same kind in an env var and in a log line).
# By first character: a value is compared with the few formats that could hold it.
_BY_FIRST: dict[str, list[TokenFormat]] = {}
for _fmt in FORMATS:
    if _fmt is not PEM:
        for _first in [_fmt.prefix[:1]] if _fmt.prefix else [*string.ascii_letters, *string.digits]:
            _BY_FIRST.setdefault(_first, []).append(_fmt)


_PRINTABLE_PAIR = re.compile(rb"[\x21-\x7e]+:[\x20-\x7e]*")


def is_basic_credential(value: str) -> bool:
    """base64 of "user:password" (a Docker `auth`, HTTP Basic)."""
    if len(value) < 8 or len(value) % 4:
        return False
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return _PRINTABLE_PAIR.fullmatch(decoded) is not None


def refine_kind(kind: str, value: str) -> str:
    """The kind of a value found under a name: its own shape first, then the name's kind."""
    shaped = value_kind(value)
    if shaped is not None:
        return shaped
    if kind == "auth" and is_basic_credential(value):
        return "docker-auth"
    return kind


def value_kind(value: str) -> str | None:
    """The catalogue's kind for a whole value, or None when no format describes it."""
    if PEM.pattern.match(value):
        return "private-key"
    for fmt in _BY_FIRST.get(value[:1], ()):
        if fmt.pattern.fullmatch(value) and (fmt.check is None or fmt.check(value)):
            return fmt.kind
    return "ngc-key" if len(value) == 84 and _is_legacy_ngc(value) else None


def _hit(m: re.Match[str], kind: str, priority: int, group: int = 0) -> Hit:
    return Hit(m.start(group), m.end(group), kind, priority)


# No hints where the finder's own patterns start with a literal: `re` searches for that
# literal as fast as a hint would, so a hint would only scan the text twice.
FINDERS: tuple[Finder, ...] = (
    Finder("private-key", _pem),
    Finder("token-shapes", _shapes),
    Finder("kubeadm-token", _kubeadm),
    Finder("authorization", _bearer),
    Finder("url-credentials", _url_credentials),
    Finder("ngc", _ngc),
)
