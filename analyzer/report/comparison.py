"""Comparing two analyses of one cluster: which findings were fixed, are new, or remain.

A finding is the same in both bundles when its rule, manual keys and object refs are the same
(its identity); wording and evidence may change between bundles and do not count.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from ..results import Analysis, Finding


def identity(f: Finding) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return (f.rule_id, tuple(f.manual), tuple(f.objects))


def compare(new: Analysis, old: Analysis, lang: str) -> dict[str, Any]:
    """The report's `comparison` block: `new` analysed against the `old` baseline."""
    now = {identity(f): f for f in new.findings()}
    before = {identity(f): f for f in old.findings()}

    def entries(keys: set[Any], source: dict[Any, Finding]) -> list[dict[str, Any]]:
        return [_entry(source[k], lang) for k in sorted(keys)]

    return {
        "baseline": {
            "source": PurePath(old.bundle["source"]).name,
            "created_at": old.bundle["created_at"],
        },
        "fixed": entries(before.keys() - now.keys(), before),
        "new": entries(now.keys() - before.keys(), now),
        "remaining": entries(now.keys() & before.keys(), now),
    }


def _entry(f: Finding, lang: str) -> dict[str, Any]:
    return {
        "id": f.id,
        "rule_id": f.rule_id,
        "manual": list(f.manual),
        "objects": list(f.objects),
        "severity": f.severity,
        "title": f.texts["title"][lang],
    }
