"""Secrets inside JSON string literals, at any depth of escaping.

A Secret's manifest in the `kubectl.kubernetes.io/last-applied-configuration` annotation is
JSON in a JSON string; its `.dockerconfigjson` is JSON in a JSON string in that: each level
escapes the quotes of the one inside (`\\"password\\":\\"...\\"`), so no finder reads a name
and its value there. A command in a JSON log's message ends at the closing quote, not at the
end of a line. So a string literal that holds an escape and a sensitive-name keyword is
decoded, every finder
(this one too, for the next level) runs over the text it writes, and each span found maps back
to the bytes that write it in the literal: only the secret's escaped bytes are replaced, and
the same secret gets the same pseudonym at every depth.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from .scan import Finder, Scan
from .spans import Hit, unescaped

# A JSON string literal on one line (raw newlines never occur inside one).
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def decode(body: str) -> tuple[str, list[int]] | None:
    """The text a literal's body (between its quotes) writes, and where in the body each of
    its characters begins (one more entry: the body's end). None when it is no valid JSON."""
    out: list[str] = []
    where: list[int] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            where.append(i)
            i += 1
            continue
        if i + 1 >= n:
            return None
        e = body[i + 1]
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
            where.append(i)
            i += 2
        elif e == "u" and i + 6 <= n:
            try:
                code = int(body[i + 2 : i + 6], 16)
            except ValueError:
                return None
            out.append(chr(code))  # a surrogate pair stays two code points, as it is written
            where.append(i)
            i += 6
        else:
            return None
    where.append(n)
    return "".join(out), where


def escaped_finder(find_all: Callable[[str], list[Hit]]) -> Finder:
    """The finder, given the engine's own search over a text (every finder, this one too)."""

    def find(scan: Scan) -> list[Hit]:
        text, hits = scan.text, []
        for start, end in scan.keyword_lines():
            if text.find("\\", start, end) != -1:
                hits.extend(_line(text, start, end, scan.keyword_positions, find_all))
        return hits

    return Finder("string-literals", find, hints=("\\",))


def _line(
    text: str, start: int, end: int, keywords: list[int], find_all: Callable[[str], list[Hit]]
) -> list[Hit]:
    hits = []
    for m in _LITERAL.finditer(text, start, end):
        body_start, body_end = m.span(1)
        body = m.group(1)
        # Without an escape the literal writes its own text, which the finders read already.
        if "\\" not in body or not _any_between(keywords, body_start, body_end):
            continue
        decoded = decode(body)
        if decoded is None:
            continue
        inner, where = decoded
        for hit in (unescaped(inner, h) for h in find_all(inner)):
            value = hit.value if hit.value is not None else inner[hit.start : hit.end]
            name = hit.name
            if name is not None:
                name = (body_start + where[name[0]], body_start + where[name[1]])
            hits.append(
                hit._replace(
                    start=body_start + where[hit.start],
                    end=body_start + where[hit.end],
                    name=name,
                    value=value,
                )
            )
    return hits


def _any_between(positions: list[int], start: int, end: int) -> bool:
    i = bisect_left(positions, start)
    return i < len(positions) and positions[i] < end
