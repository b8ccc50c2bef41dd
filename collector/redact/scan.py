"""One text under scan, shared by every finder, and the finder registry entry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .names import KEYWORDS
from .pseudonyms import Pseudonyms
from .spans import Hit


@dataclass
class Scan:
    text: str
    pseudonyms: Pseudonyms
    _lower: str | None = field(default=None, repr=False)
    _keywords: list[int] | None = field(default=None, repr=False)

    @property
    def lower(self) -> str:
        # str.lower() keeps offsets only for ASCII; other text is searched case-sensitively
        # on a copy lowered per character, which keeps them too.
        if self._lower is None:
            text = self.text
            self._lower = text.lower() if text.isascii() else "".join(_lower_char(c) for c in text)
        return self._lower

    @property
    def keyword_positions(self) -> list[int]:
        """Sorted offsets of every sensitive-name keyword (names.KEYWORDS) in the text."""
        if self._keywords is None:
            lower, found = self.lower, []
            for kw in KEYWORDS:
                pos = lower.find(kw)
                while pos != -1:
                    found.append(pos)
                    pos = lower.find(kw, pos + len(kw))
            found.sort()
            self._keywords = found
        return self._keywords

    def keyword_lines(self) -> list[tuple[int, int]]:
        """(start, end) of every line that holds a sensitive-name keyword, once each."""
        text, lines = self.text, []
        done_until = -1
        for pos in self.keyword_positions:
            if pos < done_until:
                continue
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            done_until = end = len(text) if end == -1 else end
            lines.append((start, end))
        return lines


def lower_keeping_offsets(text: str) -> str:
    """text.lower() with every offset kept (a few non-ASCII letters lower to two characters)."""
    return text.lower() if text.isascii() else "".join(_lower_char(c) for c in text)


def _lower_char(c: str) -> str:
    low = c.lower()
    return low if len(low) == 1 else c


@dataclass(frozen=True)
class Finder:
    """A pattern family: literal hints gate it, so text without any hint costs one search."""

    name: str
    find: Callable[[Scan], list[Hit]]
    hints: tuple[str, ...] = ()
    lower_hints: bool = False  # hints are searched in the lowered text

    def applies(self, scan: Scan) -> bool:
        if not self.hints:
            return True
        hay = scan.lower if self.lower_hints else scan.text
        return any(h in hay for h in self.hints)
