"""The schemas' validator on arbitrary JSON: `schemas.errors` never raises and answers what
jsonschema answers, for the manifest, rule and report schemas, both on any value at all and
on real documents with one member replaced by any value. (The mutation tests of
tests/analyzer/test_bundle_loading.py and test_schema_quick_check.py change documents with a
fixed list of odd values; these draw the values.)"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from fuzzkit import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from schemakit import assert_quick_check_agrees, graft, json_values, property_names

import tf_support_schemas as schemas
from analyzer.archive import read_members
from analyzer.rules import Loader, default_rules_dir

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["manifest", "rule", "report"]


@cache
def _keys(name: str) -> list[str]:
    return property_names(schemas.load(name))


@cache
def _samples(name: str) -> list[Any]:
    if name == "manifest":
        bundles = sorted((ROOT / "sample_bundles").glob("*.tar.zst"))[:2]
        return [json.loads(read_members(p)["manifest.json"]) for p in bundles]
    if name == "rule":
        files = sorted(default_rules_dir().rglob("*.yaml"))[:10]
        return [yaml.load(p.read_text("utf-8"), Loader=Loader) for p in files]
    files = sorted((ROOT / "tests" / "goldens").glob("*.json"))[:2]
    return [json.loads(p.read_text("utf-8")) for p in files]


@fuzz_settings(150)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_any_json_value_is_judged_as_jsonschema_judges_it(data: st.DataObject, name: str) -> None:
    assert_quick_check_agrees(name, data.draw(json_values(_keys(name))))


@fuzz_settings(150)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_a_real_document_with_any_member_is_judged_as_jsonschema_judges_it(
    data: st.DataObject, name: str
) -> None:
    doc = data.draw(st.sampled_from(_samples(name)))
    assert_quick_check_agrees(name, graft(data, doc, json_values(_keys(name), max_leaves=8)))
