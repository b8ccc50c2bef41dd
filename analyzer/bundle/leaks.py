"""A last look for secrets that should never be in a bundle.

tf-collect redacts before writing, but bundles also come from older versions and from
hand-made archives, and redaction only knows the shapes and names it knows. Only high-confidence shapes are searched
(these are values, not words like "token"), and the warning names the member and the kind,
never the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Each pattern matches the value itself; none matches tf-collect's placeholders. A pattern
# that begins with a literal is searched at the speed of a substring search (a leading `\b`
# would make the regex engine try every byte: 10x slower on a 130 MB bundle), so the word
# boundary before it is checked on each match instead (`_BOUNDED`).
PATTERNS: dict[str, re.Pattern[bytes]] = {
    "private-key": re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    "jwt": re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "github-token": re.compile(rb"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}"),
    "aws-access-key-id": re.compile(rb"A(?:KIA|SIA)[0-9A-Z]{16}\b"),
    "slack-webhook": re.compile(
        rb"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"
    ),
    "huggingface-token": re.compile(rb"hf_[A-Za-z0-9]{30,}\b"),
    "openai-key": re.compile(rb"sk-(?:proj-)?[A-Za-z0-9_-]{32,}\b"),
    "bearer-token": re.compile(rb"(?i)\bauthorization:\s*bearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
}
_BOUNDED = frozenset(
    {"jwt", "github-token", "aws-access-key-id", "huggingface-token", "openai-key"}
)
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

# Before a pattern runs over a member, what every match of it contains is looked for, each
# in the cheapest way: a byte with a memchr (`in`: instant where the byte is, ten times
# faster than a regex pass where it is not), a long literal by skipping through it, a
# short one by a regex anchored on its rarest byte. The pattern itself still decides, so
# the findings are its own; only members that cannot hold a match are passed over.
_Need = bytes | re.Pattern[bytes]
_UNDERSCORED = re.compile(rb"_(?:(?<=hf_)|(?<=gh[pousr]_)|(?<=github_))")  # two patterns'
_NEEDS: dict[str, tuple[_Need, ...]] = {
    "private-key": (b"Y", b"V", b"K", b"-----BEGIN "),
    "jwt": (b"J",),
    "github-token": (_UNDERSCORED,),
    "aws-access-key-id": (b"I",),
    "slack-webhook": (b"T", b"B", b"https://hooks.slack.com/services/T"),
    "huggingface-token": (_UNDERSCORED,),
    "openai-key": (re.compile(rb"k-(?<=sk-)"),),
}
# The one pattern without a literal start (any case) runs only where its word occurs.
_HINTS = {"bearer-token": (re.compile(rb"earer"), re.compile(rb"EARER"))}


@dataclass(frozen=True)
class Leak:
    member: str
    kind: str
    count: int


def scan(members: dict[str, bytes]) -> list[Leak]:
    return [leak for name in sorted(members) for leak in scan_member(name, members[name])]


def scan_member(name: str, data: bytes) -> list[Leak]:
    leaks = []
    found: dict[_Need, bool] = {}  # a need two patterns share is looked for once

    def has(need: _Need) -> bool:
        if need not in found:
            found[need] = need in data if type(need) is bytes else bool(need.search(data))
        return found[need]

    for kind, pattern in PATTERNS.items():
        if not all(has(need) for need in _NEEDS.get(kind, ())):
            continue
        hints = _HINTS.get(kind)
        if hints and not any(has(h) for h in hints):
            continue
        first = pattern.search(data)  # most members hold none: no iterator for them
        if first is None:
            continue
        starts = [first.start()] + [m.start() for m in pattern.finditer(data, first.end())]
        if kind in _BOUNDED:
            starts = [s for s in starts if s == 0 or data[s - 1] not in _WORD]
        if starts:
            leaks.append(Leak(name, kind, len(starts)))
    return leaks


class Scanner:
    """Members scanned as they stream in. Small ones (a bundle holds thousands of short logs)
    are first scanned together, joined by a NUL byte, which no pattern matches and which
    bounds a word as a member's start and end do: a batch in which nothing is found holds
    nothing, and only a batch with a finding is scanned member by member. Running every
    pattern over each 500-byte log cost more than the patterns' work itself."""

    SMALL = 64 * 1024  # a member at least this large is scanned on its own
    BATCH = 1024 * 1024

    def __init__(self) -> None:
        self.leaks: list[Leak] = []
        self._batch: list[tuple[str, bytes]] = []
        self._size = 0

    def add(self, name: str, data: bytes) -> None:
        if len(data) >= self.SMALL:
            self.leaks += scan_member(name, data)
            return
        self._batch.append((name, data))
        self._size += len(data) + 1
        if self._size >= self.BATCH:
            self._flush()

    def finish(self) -> list[Leak]:
        self._flush()
        return self.leaks

    def _flush(self) -> None:
        if self._batch and scan_member("", b"\0".join(data for _, data in self._batch)):
            for name, data in self._batch:
                self.leaks += scan_member(name, data)
        self._batch = []
        self._size = 0
