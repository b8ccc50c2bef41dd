"""A last look for secrets that should never be in a bundle.

tf-collect redacts before writing, but bundles also come from older versions and from
hand-made archives, and redaction only knows the shapes and names it knows. The shapes
searched are the catalogue's standalone formats (tf_support_schemas.tokens), the very table
tf-collect redacts by, so both tools agree on kinds and bounds; none matches a placeholder.
The warning names the member and the kind, never the value.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tf_support_schemas.tokens import BEARER, STANDALONE, Scanner, bearer_token

_SHAPES = Scanner(STANDALONE, binary=True)
_BEARER = re.compile(BEARER.encode())  # the rule tf-collect redacts bearer tokens by


@dataclass(frozen=True)
class Leak:
    member: str
    kind: str
    count: int


def scan_member(name: str, data: bytes) -> list[Leak]:
    counts: Counter[str] = Counter(found.format.kind for found in _SHAPES.find(data))
    # The one pattern without a literal start tries every position: it runs only where its
    # word is (a substring search), which most members do not hold.
    if b"earer" in data or b"EARER" in data:
        bearer = sum(
            1 for m in _BEARER.finditer(data) if bearer_token(m.group(1).decode("latin-1"))
        )
        if bearer:
            counts["bearer-token"] += bearer
    return [Leak(name, kind, n) for kind, n in sorted(counts.items())]
