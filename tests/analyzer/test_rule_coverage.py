"""Every row of the manual has a rule, and every scenario's expectations cite real keys."""

from __future__ import annotations

from pathlib import Path

import yaml

from analyzer.rules.loading import default_rules_dir, load_rules
from tf_support_schemas.manual import load_manual

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"


def test_every_manual_row_has_a_rule() -> None:
    covered = {key for rule in load_rules(default_rules_dir()) for key in rule.manual}
    missing = sorted(set(load_manual().rows) - covered)
    assert missing == [], f"manual rows without a rule: {missing}"


def test_expected_and_ignorable_rows_are_info() -> None:
    manual = load_manual()
    for rule in load_rules(default_rules_dir()):
        kinds = {manual.rows[k].kind for k in rule.manual}
        if rule.manual and kinds <= {"expected", "ignorable"}:
            assert rule.severity == "info", rule.id


def test_scenario_expectations_name_real_keys() -> None:
    # A finding is expected by its manual row, or (a known bug) by its rule id.
    known = {r.id for r in load_rules(default_rules_dir()) if r.known is not None}
    rows = set(load_manual().rows)
    for expect in sorted(SAMPLES.glob("*/expect.yaml")):
        spec = yaml.safe_load(expect.read_text()) or {}
        keys = {f.get("manual") or f.get("rule") for f in spec.get("findings") or []}
        assert keys <= rows | known, f"{expect}: unknown keys {sorted(keys - rows - known)}"
        root = spec.get("first_root_cause")
        assert root is None or root in keys, f"{expect}: first_root_cause {root} not among findings"
