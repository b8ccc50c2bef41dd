"""What a finder reports (a span of text and what it is), how the spans merge, and the one
place that names what is replaced: finders find, `apply` merges, and only the spans it keeps get
a pseudonym, so the redaction map holds exactly what was replaced."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from typing import NamedTuple

from .pseudonyms import Pseudonyms

ADDRESS_KINDS = frozenset({"ipv4", "ipv6", "hostname"})
PLACEHOLDER = re.compile(r"<redacted:[a-z0-9-]+:[0-9a-f]{6,32}>")


class Hit(NamedTuple):
    start: int
    end: int
    kind: str
    # Wins over another hit of the same span: a JWT found as such (2) names its kind better
    # than the `token=` pair it sits in (1).
    priority: int = 0
    # The span of the name a pair's value was found under. A name that is itself part of a
    # secret names nothing: mysql's `-pS3cretPass db` is a password glued to its flag, not a
    # flag `-pS3cretPass` whose value is `db`.
    name: tuple[int, int] | None = None
    # The value the span writes, where the text holds it encoded (a private key with its
    # newlines JSON-escaped): the same value gets the same pseudonym however it is written.
    value: str | None = None


def apply(text: str, hits: list[Hit], pseudonyms: Pseudonyms) -> tuple[str, Counter[str]]:
    """Replace every hit; overlapping hits merge so that no part of either survives. Only the
    spans that are replaced are named (merge first, assign after)."""
    counts: Counter[str] = Counter()
    if not hits:
        return text, counts
    # A placeholder already in the text (an earlier pass, a re-redacted bundle) names its
    # kind, and "password:1ce851" in it must not read as a pair.
    done = [m.span() for m in PLACEHOLDER.finditer(text)] if "<redacted:" in text else []
    hits = [unescaped(text, h) for h in _without_secret_names(hits)]
    hits.sort(key=lambda h: (h.start, -(h.end - h.start), -h.priority))
    kept: list[Hit] = []
    d = 0
    for hit in hits:
        while d < len(done) and done[d][1] <= hit.start:
            d += 1
        if d < len(done) and done[d][0] < hit.end:
            continue
        if kept and hit.start < kept[-1].end:
            last = kept[-1]
            if hit.end <= last.end:
                continue  # inside the one already kept
            # A partial overlap: one placeholder covers both, of the secret kind if any.
            kind = last.kind if last.kind not in ADDRESS_KINDS else hit.kind
            if kind in ADDRESS_KINDS:
                kind = "secret"
            kept[-1] = Hit(last.start, hit.end, kind, 3)
            continue
        kept.append(hit)
    out: list[str] = []
    pos = 0
    for hit in kept:
        written = text[hit.start : hit.end]
        replacement = pseudonyms.secret(hit.kind, written if hit.value is None else hit.value)
        out.append(text[pos : hit.start])
        out.append(replacement)
        pos = hit.end
        if replacement != written:
            counts[hit.kind] += 1
    out.append(text[pos:])
    return "".join(out), counts


_ESCAPED_QUOTE = ('\\"', "\\'")


def unescaped(text: str, hit: Hit) -> Hit:
    """A span read from escaped text (a value in `\\"password\\":\\"...\\"`) without the escaped
    quotes around it nor a backslash cut off at its end: the bytes that write the value only,
    as a finder of the decoded text finds them."""
    if hit.value is not None:
        return hit
    start, end = hit.start, hit.end
    while end - start > 2 and text.startswith(_ESCAPED_QUOTE, start):
        start += 2
    while end - start > 2 and text.endswith(_ESCAPED_QUOTE, start, end):
        end -= 2
    if end - start > 1 and text[end - 1] == "\\" and text[end - 2] != "\\":
        end -= 1
    return hit if (start, end) == (hit.start, hit.end) else hit._replace(start=start, end=end)


def _without_secret_names(hits: list[Hit]) -> list[Hit]:
    """Drop the pairs whose name overlaps another hit (every hit's value lies after its name,
    so a hit never overlaps its own name)."""
    if not any(h.name for h in hits):
        return hits
    spans = sorted((h.start, h.end) for h in hits)
    starts = [s for s, _ in spans]
    reach, furthest = [], -1  # reach[i]: the furthest end among spans[: i + 1]
    for _, end in spans:
        furthest = max(furthest, end)
        reach.append(furthest)
    kept = []
    for hit in hits:
        if hit.name is not None:
            before = bisect_left(starts, hit.name[1])  # spans that start inside or before it
            if before and reach[before - 1] > hit.name[0]:
                continue
        kept.append(hit)
    return kept
