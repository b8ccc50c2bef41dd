"""The catalogue of token formats: secrets recognisable by their shape alone, wherever they are.

One table (FORMATS: the rows of formats_core.py, then those of formats_rule_sets.py) serves
both halves of the bundle contract: tf-collect's redaction finds these shapes in every text
before it reaches disk (collector/redact/patterns.py), and tf-analyze's leak scan looks for the
same shapes in every member of a bundle it loads (analyzer/bundle/leaks.py), so the two agree
on kinds and bounds. Each format (token_format.TokenFormat) names the kind its placeholder shows
(`<redacted:KIND:TAG>`), the platform, a page that states the shape (the platform's, or the
public rule set's where the platform states none), the public rule sets that hold it
(docs/token-formats.md counts them and lists what the table leaves out), and examples made up
for the tests (true positives, and near misses that must stay); none was ever a credential.

A format is a literal `prefix` and a regex `body` after it. One RE2 scan finds where any
prefix starts (an automaton over every prefix at once: `re` would try each alternative at
every position), the format's regex runs only there, and the character before each match is
checked in Python (a leading look-behind costs the same as no literal).
Where a platform states an exact length and its prefix is short or ordinary (`oy2`, `dapi`,
`pul-`), the body has that length; where the prefix is distinctive (`glpat-`, `HRKU-`), the
body has the documented minimum and no maximum, so that a longer generation still matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import AnyStr

import re2

from .formats_core import CORE
from .formats_rule_sets import RULE_SET_FORMATS
from .token_format import TokenFormat

# The core formats first: within a family the first that matches wins (OpenRouter's `sk-or-v1-`
# before OpenAI's `sk-`), and no rule-set row takes a core row's prefix.
FORMATS: tuple[TokenFormat, ...] = (*CORE, *RULE_SET_FORMATS)


def kinds() -> set[str]:
    return {f.kind for f in FORMATS}


# --- the scanner, shared by redaction (str) and the leak scan (bytes) -----------------------


@dataclass(frozen=True)
class Found:
    start: int  # of the secret (a webhook's fixed path before it is not part of it)
    end: int
    format: TokenFormat


class Scanner:
    """Every standalone format of the catalogue over a text.

    Formats whose prefixes share a first character form a family, matched as one alternation
    from left to right: at a position the first format that matches wins, and the next match
    starts after it, as `finditer` would. The alternation is only tried where one of the
    family's prefixes starts; one RE2 scan of every prefix finds those positions, in the text
    as ASCII (a `?` for any other character, so that offsets stay those of the text).
    """

    def __init__(self, formats: tuple[TokenFormat, ...], *, binary: bool = False) -> None:
        self.binary = binary
        families: dict[str, list[tuple[str, str]]] = {}
        self._anchored: list[tuple[AnyStr, re.Pattern[AnyStr], TokenFormat]] = []
        self._formats: dict[str, TokenFormat] = {}
        self._heads: dict[str, re.Pattern[str]] = {}
        for i, fmt in enumerate(formats):
            name = f"f{i}"
            self._formats[name] = fmt
            if fmt.head:
                self._heads[name] = self._compile(re.escape(fmt.prefix) + fmt.head)
            if fmt.prefix:
                rest = re.escape(fmt.prefix[1:]) + fmt.head + fmt.body
                families.setdefault(fmt.prefix[0], []).append((name, rest))
            else:
                anchor = fmt.anchor.encode() if binary else fmt.anchor
                self._anchored.append((anchor, self._compile(fmt.regex), fmt))
        self._families = {
            first: self._compile(
                re.escape(first) + "(?:" + "|".join(f"(?P<{n}>{r})" for n, r in alts) + ")"
            )
            for first, alts in families.items()
        }
        prefixes = sorted({f.prefix for f in formats if f.prefix}, key=len, reverse=True)
        self._prefixes = re2.compile(b"|".join(re.escape(p).encode() for p in prefixes))

    def _compile(self, regex: str) -> re.Pattern:
        return re.compile(regex.encode() if self.binary else regex)

    def find(self, text: AnyStr) -> Iterator[Found]:
        starts = self._starts(text)
        for first, family in self._families.items():
            end = 0
            for pos in starts.get(first, ()):
                m = family.match(text, pos) if pos >= end else None
                if m is None:
                    continue
                end = m.end()
                name = m.lastgroup
                assert name is not None
                found = self._accept(text, pos, end, self._formats[name], name)
                if found is not None:
                    yield found
        for anchor, pattern, fmt in self._anchored:
            if anchor in text:
                for m in pattern.finditer(text):
                    found = self._accept(text, m.start(), m.end(), fmt, "")
                    if found is not None:
                        yield found

    def _starts(self, text: AnyStr) -> dict[str, list[int]]:
        """Offsets where a prefix starts, in order, per family (the prefix's first character).
        Each search resumes one character after the last start: a prefix may start inside
        another (`eyJ` in `ops_eyJ`)."""
        data = text if isinstance(text, bytes) else text.encode("ascii", "replace")
        starts: dict[str, list[int]] = {}
        search = self._prefixes.search
        m = search(data)
        while m is not None:
            at = m.start()
            starts.setdefault(chr(data[at]), []).append(at)
            m = search(data, at + 1)
        return starts

    def _accept(
        self, text: AnyStr, start: int, end: int, fmt: TokenFormat, name: str
    ) -> Found | None:
        if not left_free(text, start, fmt.left):
            return None
        if fmt.check is not None:
            value = text[start:end]
            if not fmt.check(
                value.decode("ascii", "replace") if isinstance(value, bytes) else value
            ):
                return None
        head = self._heads.get(name)
        if head is not None:
            start = head.match(text, start).end()
        return Found(start, end, fmt)


def left_free(text: AnyStr, start: int, chars: frozenset[str]) -> bool:
    """Nothing of `chars` right before `start`; an escaped newline or tab (`\\n` inside a JSON
    string: a line of a log kept in an object) is a boundary, not the letter n."""
    if start == 0 or not chars:
        return True
    before = text[start - 1 : start]
    c = before.decode("latin-1") if isinstance(before, bytes) else before
    if c not in chars:
        return True
    return start >= 2 and text[start - 2 : start - 1] in ("\\", b"\\") and c in "nrt"


# A bearer token has no shape of its own: it is the token68 (RFC 7235) after the word Bearer,
# wherever it is written (a header, a Go map, curl -H). The engine redacts it and the leak scan
# counts it by this one rule; "Bearer authentication" is prose, so a token needs a digit,
# punctuation, or mixed case when long.
BEARER = r"(?i)(?<![A-Za-z0-9_])bearer\s+([A-Za-z0-9._~+/-]{8,}=*)(?![A-Za-z0-9._~+/=-])"


def bearer_token(token: str) -> bool:
    """Whether the word after "Bearer" is a token, not prose."""
    return (
        any(c.isdigit() for c in token)
        or any(c in "._~+/=" for c in token)
        or (
            len(token) >= 16 and any(c.isupper() for c in token) and any(c.islower() for c in token)
        )
    )


# The PEM header: the engine redacts the key's whole body from it (patterns.py), the leak
# scan reports the header.
PEM = next(f for f in FORMATS if f.prefix == "-----BEGIN ")
STANDALONE: tuple[TokenFormat, ...] = tuple(f for f in FORMATS if f.standalone)
