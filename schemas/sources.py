"""The bundle's data sources, declared once.

A rule reads data by name: each kind of binding in a rule file (`objects`, `logs`, ...; a
`for_each` reads `objects`) is one source here, with the manifest artifact type that holds it
and the accessor of the bundle reader (analyzer.bundle.Bundle) that reads it. The collector's
plan steps name the sources they gather (collector/plan.py) and the rules' bindings are read
by source (analyzer/rules/bindings.py); the tests check that every rule input has a source and
every source a step and an accessor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Source:
    name: str  # the binding's keyword in a rule file
    artifact: str  # the manifest artifact type it is stored as
    accessor: str  # the Bundle method that reads it


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("objects", "objects", "objects"),
        Source("events_for", "objects", "events_for"),  # Events, found by the object they name
        Source("logs", "log", "log"),
        Source("exec", "exec", "exec_outputs"),
        Source("helm", "helm", "document"),
        Source("metrics", "metrics", "document"),
    )
}


def source_of(binding: Mapping[str, Any]) -> Source:
    """The source a rule's binding reads: the one whose keyword it holds."""
    found = [SOURCES[key] for key in binding if key in SOURCES]
    if len(found) != 1:
        raise ValueError(f"a binding reads one source of {sorted(SOURCES)}: {sorted(binding)}")
    return found[0]
