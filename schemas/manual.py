"""The troubleshooting manual's catalogue (docs/manual/rows.yaml): sections and row keys.

The bundle contract names them: a manifest artifact's `scope` is a section key, a rule's and a
finding's `manual` are row keys. The collector orders its plan by the sections, the analyzer
checks rules and orders reports by both; this is the one reader of the file for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

# The loader of every YAML file the package ships (the manual, rules, release data): libyaml's
# where PyYAML was built with it.
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Section:
    key: str
    en: str
    zh: str


@dataclass(frozen=True)
class Row:
    key: str
    section: str
    kind: str  # cause | expected | ignorable


@dataclass(frozen=True)
class Manual:
    sections: dict[str, Section]
    rows: dict[str, Row]

    def section_order(self, key: str) -> int:
        return list(self.sections).index(key) if key in self.sections else len(self.sections)


@cache
def load_manual() -> Manual:
    text = resources.files("tf_support_manual").joinpath("rows.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.load(text, Loader=Loader)
    sections = {s["key"]: Section(s["key"], s["en"], s["zh"]) for s in data["sections"]}
    rows = {r["key"]: Row(r["key"], r["section"], r["kind"]) for r in data["rows"]}
    return Manual(sections, rows)
