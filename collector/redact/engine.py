"""The Redactor: one per bundle, passed explicitly to whatever writes.

State: the per-bundle key and the original -> placeholder map (in `Pseudonyms`), and the
counts per member and kind that the manifest records. Nothing here is global, nothing is
written to disk, and it is safe to share between the collector's worker threads.

Order of passes, for every text: every finder runs over the whole text (JSON documents on
their own lines by structure, the patterns, the pairs, and the JSON string literals that hold
escaped JSON, whose decoded text every finder reads again), then the spans merge and only those
kept are replaced, at once (so one finder never sees another's placeholder).
Objects are redacted by structure before they are serialised (`redact_object`), and their
serialised bytes then go through the text pass like everything else.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from . import commands, pairs, patterns, prose, secret_yaml
from .addresses import AddressPass
from .escaped import escaped_finder
from .pseudonyms import Pseudonyms
from .scan import Finder, Scan
from .spans import Hit, apply
from .structured import JSON_LINES, Structured

KEY_ENV = "TF_COLLECT_REDACTION_KEY"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def key_from_env() -> bytes | None:
    """A fixed key for reproducible test and sample bundles (hex in $TF_COLLECT_REDACTION_KEY).

    Whoever knows the key can reverse the address pseudonyms: never set it for a bundle that
    leaves your hands.
    """
    raw = os.environ.get(KEY_ENV)
    if not raw:
        return None
    try:
        key = bytes.fromhex(raw)
    except ValueError:
        raise ConfigError(f"{KEY_ENV} must be hex") from None
    if len(key) < 16:
        raise ConfigError(f"{KEY_ENV} must hold at least 16 bytes (32 hex digits)")
    return key


@dataclass(frozen=True)
class Structure:
    """A decoded value after the structural pass, and what that pass replaced."""

    value: Any
    counts: Counter[str]


class Redactor:
    def __init__(self, *, key: bytes | None = None, public_ips: bool = False) -> None:
        self.pseudonyms = Pseudonyms(key)
        self.public_ips = public_ips
        self._finders: tuple[Finder, ...] = (
            JSON_LINES,
            *patterns.FINDERS,
            *pairs.FINDERS,
            *commands.FINDERS,
            *prose.FINDERS,
            *secret_yaml.FINDERS,
            escaped_finder(self._hits),
        )
        self._addresses = AddressPass(self.pseudonyms, public_ips=public_ips)
        self._lock = threading.Lock()
        self._files: dict[str, Counter[str]] = {}
        self._names: dict[str, str] = {}
        self._parts: dict[str, tuple[str, Counter[str]]] = {}

    # ------------------------------------------------------------------ text
    def redact_text(self, text: str, *, member: str | None = None) -> str:
        out, counts = self._text(text)
        self.record(member, counts)
        return out

    def redact_bytes(self, data: bytes, *, member: str | None = None) -> bytes:
        # surrogateescape: bytes that are not UTF-8 pass through unchanged.
        text = data.decode("utf-8", errors="surrogateescape")
        return self.redact_text(text, member=member).encode("utf-8", errors="surrogateescape")

    def _hits(self, text: str) -> list[Hit]:
        """What every finder finds in `text`: spans, not yet merged nor named."""
        scan = Scan(text, self.pseudonyms)
        hits = []
        for finder in self._finders:
            if finder.applies(scan):
                hits.extend(finder.find(scan))
        return hits

    def _text(self, text: str) -> tuple[str, Counter[str]]:
        out, counts = apply(text, self._hits(text), self.pseudonyms)
        # Addresses last, over the secrets' placeholders (which hold none): the most frequent
        # finding takes the cheapest path.
        return self._addresses.run(out, counts), counts

    # ------------------------------------------------------------------ objects
    def redact_object(self, obj: Any, *, member: str | None = None) -> Any:
        """Structural pass over a decoded object; serialise the result, then redact_bytes it."""
        done = self.structure(obj)
        self.record(member, done.counts)
        return done.value

    def structure(self, obj: Any) -> Structure:
        """The structural pass alone, counted but not yet recorded for any member: the
        collector runs it on each object as it arrives, and the writer records the counts of
        the objects it finally writes."""
        structured = Structured(self.pseudonyms)
        return Structure(structured.redact(obj), structured.counts)

    def redact_strings(self, obj: Any, *, member: str | None = None) -> Any:
        """The text pass over every string (keys too) of a decoded value, e.g. the manifest."""
        # A manifest repeats the same statuses, resources and names thousands of times; each
        # distinct string is scanned once and its counts added for every occurrence.
        seen: dict[str, tuple[str, Counter[str]]] = {}
        total: Counter[str] = Counter()

        def text(value: str) -> str:
            known = seen.get(value)
            if known is None:
                known = seen[value] = self._text(value)
            total.update(known[1])
            return known[0]

        def walk(value: Any) -> Any:
            if isinstance(value, dict):
                return {walk(k): walk(v) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, str):
                return text(value)
            return value

        out = walk(obj)
        self.record(member, total)
        return out

    # ------------------------------------------------------------------ names
    def member_name(self, name: str) -> str:
        """A member path with every component redacted; the same name always maps the same."""
        with self._lock:
            known = self._names.get(name)
        if known is not None:
            return known
        parts = []
        counts: Counter[str] = Counter()
        for part in name.split("/"):
            out, found = self._name_part(part)
            counts.update(found)
            parts.append(out)
        redacted = "/".join(parts)
        with self._lock:
            self._names.setdefault(name, redacted)
        self.record(name, counts)
        return redacted

    def _name_part(self, part: str) -> tuple[str, Counter[str]]:
        # Thousands of member names share a few dozen components (logs/, the namespace, the
        # container names): each is scanned once.
        with self._lock:
            known = self._parts.get(part)
        if known is None:
            out, found = self._text(part)
            if found and out != part and "<" in out:
                out = _UNSAFE_NAME.sub("_", out)  # a secret placeholder is no file name
            known = (out, found)
            with self._lock:
                self._parts[part] = known
        return known

    # ------------------------------------------------------------------ results
    def record(self, member: str | None, counts: Counter[str]) -> None:
        """Add counts found outside this engine's passes (e.g. a document pass) to a member."""
        if not counts:
            return
        with self._lock:
            self._files.setdefault(member or "", Counter()).update(counts)

    def summary(self) -> dict[str, Any]:
        """The manifest's redaction block: counts per kind and per member, never a value."""
        with self._lock:
            files: dict[str, Counter[str]] = {}
            total: Counter[str] = Counter()
            for member, counts in self._files.items():
                total.update(counts)
                if member:  # text redacted for no member counts in the totals only
                    files.setdefault(self._names.get(member, member), Counter()).update(counts)
        return {
            "enabled": True,
            "public_ips": self.public_ips,
            "counts": dict(sorted(total.items())),
            "files": {m: dict(sorted(c.items())) for m, c in sorted(files.items())},
        }

    def mapping(self) -> dict[str, str]:
        return self.pseudonyms.mapping()

    # ------------------------------------------------------------------ worker processes
    def export(self) -> dict[str, Any]:
        """What this engine saw, for the parent of a worker process (parallel.py)."""
        secrets, addresses = self.pseudonyms.export()
        with self._lock:
            files = {m: dict(c) for m, c in self._files.items()}
            names = dict(self._names)
        return {"files": files, "names": names, "secrets": secrets, "addresses": addresses}

    def reset(self) -> None:
        with self._lock:
            self._files.clear()
            self._names.clear()
        self.pseudonyms.forget()

    def merge(self, states: list[dict[str, Any]]) -> bool:
        """Adopt workers' findings; False (nothing adopted) when their tags collided."""
        if not self.pseudonyms.merge([(s["secrets"], s["addresses"]) for s in states]):
            return False
        with self._lock:
            for state in states:
                for member, counts in state["files"].items():
                    self._files.setdefault(member, Counter()).update(counts)
                for name, redacted in state["names"].items():
                    self._names.setdefault(name, redacted)
        return True
