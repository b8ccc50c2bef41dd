#!/usr/bin/env python3
"""Regenerate docs/rules.md, the rule reference, from the rule files in rules/.

    python scripts/make_rules_doc.py

Run it after adding or changing a rule; tests/analyzer/test_rules_doc.py fails while the
committed docs/rules.md differs from what this writes.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.rules.docs import render
from analyzer.rules.loading import load_rules

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"


def main() -> None:
    DOC.write_text(render(load_rules(ROOT / "rules")), encoding="utf-8", newline="\n")
    print(f"{DOC.relative_to(ROOT)}  {DOC.stat().st_size} bytes")


if __name__ == "__main__":
    main()
