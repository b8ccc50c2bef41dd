"""The rule and report schemas' quick checks answer what jsonschema answers: they pass every
shipped rule and golden report, and never pass what jsonschema refuses (the manifest's own
check is tested with the bundle reader, tests/analyzer/test_bundle_loading.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemakit import assert_quick_check_agrees, mutate

import tf_support_schemas as schemas
from analyzer.rules import Loader, default_rules_dir

GOLDENS = Path(__file__).resolve().parents[1] / "goldens"


@cache
def _samples(name: str) -> list[Any]:
    if name == "rule":
        files = sorted(default_rules_dir().rglob("*.yaml"))
        return [yaml.load(p.read_text("utf-8"), Loader=Loader) for p in files]
    return [json.loads(p.read_text("utf-8")) for p in sorted(GOLDENS.glob("*.json"))[:8]]


@pytest.mark.parametrize("name", ["rule", "report"])
def test_shipped_rules_and_golden_reports_pass_the_quick_check(name: str) -> None:
    check = schemas._quick_check(name)
    assert check is not None
    samples = _samples(name)
    assert samples
    for sample in samples:
        assert check(sample)


_ODD = [None, True, False, 0, 1, -1, 1.0, 1.5, 2, "", "ok", "x y", "2026-11-30", "critical",
        "pods", "tf", "objects", [], ["a"], ["a", "a"], [1, True], {}, {"a": 1},
        {"objects": "pods"}, {"logs": "pod"}, {"objects": "pods", "logs": "pod"},
        {"helm": "release"}, "UPPER", "a-b"]  # fmt: skip
_KEYS = ["surprise", "Bad Key", "ok", "where", "logs", "objects", "events_for", "tail", "manual",
         "views", "links", "first_broken", "containers", "previous", "en"]  # fmt: skip


@pytest.mark.parametrize("name", ["rule", "report"])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_quick_check_never_passes_what_jsonschema_refuses(name: str, data: st.DataObject) -> None:
    doc = mutate(data, data.draw(st.sampled_from(_samples(name))), _KEYS, _ODD, depth=4)
    assert_quick_check_agrees(name, doc)
