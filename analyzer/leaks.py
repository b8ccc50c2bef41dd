"""A last look for secrets that should never be in a bundle.

tf-collect redacts before writing, but bundles also come from older versions and from
hand-made archives, and redaction only knows the shapes and names it knows. Only high-confidence shapes are searched
(these are values, not words like "token"), and the warning names the member and the kind,
never the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Each pattern matches the value itself; none matches tf-collect's placeholders.
PATTERNS: dict[str, re.Pattern[bytes]] = {
    "private-key": re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    "jwt": re.compile(rb"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "github-token": re.compile(rb"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    "aws-access-key-id": re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "slack-webhook": re.compile(
        rb"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"
    ),
    "huggingface-token": re.compile(rb"\bhf_[A-Za-z0-9]{30,}\b"),
    "openai-key": re.compile(rb"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}\b"),
    "bearer-token": re.compile(rb"(?i)\bauthorization:\s*bearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
}
# Literal hints: a member none of them occurs in needs no regex pass at all.
_HINTS = (
    b"PRIVATE KEY",
    b"eyJ",
    b"gh",
    b"AKIA",
    b"ASIA",
    b"hooks.slack.com",
    b"hf_",
    b"sk-",
    b"earer",
)


@dataclass(frozen=True)
class Leak:
    member: str
    kind: str
    count: int


def scan(members: dict[str, bytes]) -> list[Leak]:
    leaks = []
    for name in sorted(members):
        data = members[name]
        if not any(h in data for h in _HINTS):
            continue
        for kind, pattern in PATTERNS.items():
            count = sum(1 for _ in pattern.finditer(data))
            if count:
                leaks.append(Leak(name, kind, count))
    return leaks
