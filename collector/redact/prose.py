"""Secrets named in prose and in `name value` config lines: `api key: X`, `client secret X`,
`the admin password is X`, `requirepass X` (redis.conf).

Words around a secret are ordinary words, so only a value that looks generated counts: mixed
case and a digit, or a long run of letters and digits (a hex key). `secret "webhook-cert" not
found`, `password field is empty` and `token has expired` stay as they are.
"""

from __future__ import annotations

import re

from .names import NAME_CHARS, is_placeholder_value, prefixed_kind
from .patterns import refine_kind
from .scan import Finder, Scan
from .spans import Hit

_NAMED = re.compile(
    r"(?:(api|access|secret|auth|app|admin|master|private)[ _-]?key|password|passwd|passphrase"
    r"|secret|token|requirepass|masterauth)"
    r"(?:[ \t]+is|[ \t]*[:=])?[ \t]+[\"']?([A-Za-z0-9_+/=.~!@#$%^&*-]{8,})"
)
_KINDS = {"password": "password", "passwd": "password", "passphrase": "password",
          "requirepass": "password", "masterauth": "password", "secret": "secret",
          "token": "token"}  # fmt: skip
_STARTS = ("pass", "secret", "token", "key", "requirepass", "masterauth")


def _prose(scan: Scan) -> list[Hit]:
    text, lower = scan.text, scan.lower
    hits: list[Hit] = []
    for pos in scan.keyword_positions:
        start = _word_start(lower, pos)
        if start is None:
            continue
        m = _NAMED.match(lower, start)
        if m is None or (start and text[start - 1] == "/" and not _named_whole(text, start)):
            continue
        vs, ve = m.span(2)
        value = text[vs:ve].rstrip(".,;:!")
        if not strongly_generated(value) or is_placeholder_value(value):
            continue
        word = m.group(0).split()[0].rstrip(":=")
        kind = "api-key" if m.group(1) else _KINDS.get(word, "secret")
        kind = refine_kind(kind, value)
        hits.append(Hit(vs, vs + len(value), kind, 1))
    return hits


def _word_start(lower: str, pos: int) -> int | None:
    """Where the name around a keyword starts (`api key` starts two words back), or None when
    the keyword is inside a longer word."""
    i = pos
    while i > 0 and lower[i - 1].isalpha():
        i -= 1
    if i > 0 and (lower[i - 1].isalnum() or lower[i - 1] in "_$"):
        return None
    if lower.startswith("key", pos) and i == pos:
        # `api key`, `access-key`: the qualifier is the word before.
        j = pos - 1
        if j >= 0 and lower[j] in " _-":
            k = j
            while k > 0 and lower[k - 1].isalpha():
                k -= 1
            return k if k < j else None
        return None
    return i if lower.startswith(_STARTS, i) else None


def _named_whole(text: str, start: int) -> bool:
    """Whether a name after a `/` is sensitive with its prefix (`checksum/secret` is not)."""
    end = start
    while end < len(text) and text[end] in NAME_CHARS:
        end += 1
    return prefixed_kind(text, start, end) is not None


def strongly_generated(value: str) -> bool:
    """Mixed case and a digit, or 24+ letters and digits with both in them (a hex key)."""
    if len(value) < 8:
        return False
    digit = any(c.isdigit() for c in value)
    letter = any(c.isalpha() for c in value)
    if digit and any(c.isupper() for c in value) and any(c.islower() for c in value):
        return True
    return len(value) >= 24 and digit and letter and value.isalnum()


FINDERS: tuple[Finder, ...] = (Finder("prose", _prose),)
