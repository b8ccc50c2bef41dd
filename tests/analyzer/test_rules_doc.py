"""docs/rules.md is generated from the rule files and must be current."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.rules.docs import COLUMNS, SCRIPT, render
from analyzer.rules.loading import load_rules

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules.md"


@pytest.fixture(scope="module")
def rules():
    return load_rules(ROOT / "rules")


@pytest.fixture(scope="module")
def text(rules) -> str:
    return render(rules)


def test_committed_rules_doc_is_current(text: str) -> None:
    committed = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert committed == text, f"docs/rules.md is stale: run `{SCRIPT}` and commit the result"


def test_rule_row_names_key_severity_and_both_titles(rules, text: str) -> None:
    rows = [line for line in text.splitlines() if line.startswith("| [`")]
    assert len(rows) == len(rules)
    row = next(r for r in rows if r.startswith("| [`controller-crash/global-config-invalid`]"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[1] == "`controller-crash/global-config-invalid`"
    assert cells[2] == "critical"
    assert cells[3] == (
        "Controller {{ object.name }} cannot start: the dynamicConfig in the Helm values is invalid"
        "<br>controller {{ object.name }} 无法启动：Helm values 里的 dynamicConfig 不合法"
    )
    assert "logs (current and previous) of container `controller` or `manager`" in cells[4]


def test_sections_follow_the_manual_and_pipes_are_escaped(text: str) -> None:
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Collect the basics (先收集基本信息)"
    # The manual's sections in its order, then the known TensorFusion bugs.
    assert headings[-2] == "## Errors you can ignore (可以忽略的报错)"
    assert headings[-1] == "## Known TensorFusion bugs (TensorFusion 已知缺陷)"
    row = next(line for line in text.splitlines() if "`baseline/gpu-capacity-missing`]" in line)
    assert "{{ missing \\| join(' and ') }}" in row
    assert row.count(" | ") == len(COLUMNS) - 1  # no unescaped pipe splits a cell
