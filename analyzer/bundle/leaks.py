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
# would make the regex engine try every position), so the word boundary before it is checked
# on each match instead (`_BOUNDED`).
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


@dataclass(frozen=True)
class Leak:
    member: str
    kind: str
    count: int


def scan_member(name: str, data: bytes) -> list[Leak]:
    leaks = []
    for kind, pattern in PATTERNS.items():
        # The one pattern without a literal start tries every position: it runs only where
        # its word is (a substring search), which most members do not hold.
        if kind == "bearer-token" and b"earer" not in data and b"EARER" not in data:
            continue
        starts = [m.start() for m in pattern.finditer(data)]
        if kind in _BOUNDED:
            starts = [s for s in starts if s == 0 or data[s - 1] not in _WORD]
        if starts:
            leaks.append(Leak(name, kind, len(starts)))
    return leaks
