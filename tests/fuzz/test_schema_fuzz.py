"""The schemas' validator on arbitrary JSON: `schemas.first_error` never raises, answers in one
line, and judges as a Draft 2020-12 validator with format checking judges, for every schema,
both on any value at all and on real documents with one member replaced by any value or changed
a little at random."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import samplekit
import yaml
from bundlekit import read_members
from fuzzkit import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from schemakit import assert_validators_agree, graft, json_values, mutate, property_names

import tf_support_schemas as schemas
from analyzer.report.render import render
from analyzer.rules.loading import Loader, default_rules_dir

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["manifest", "rule", "report", "functions"]


@cache
def _keys(name: str) -> list[str]:
    return property_names(schemas.load(name))


@cache
def _samples(name: str) -> list[Any]:
    if name == "manifest":
        bundles = sorted((ROOT / "sample_bundles").glob("*.tar.zst"))[:2]
        return [json.loads(read_members(p)["manifest.json"]) for p in bundles]
    if name in ("rule", "functions"):
        files = sorted(default_rules_dir().rglob("_*.yaml" if name == "functions" else "*/*.yaml"))
        return [yaml.load(p.read_text("utf-8"), Loader=Loader) for p in files[:10]]
    # The JSON reports of two sample bundles, as tf-analyze writes them.
    return [json.loads(render(samplekit.report(n), "json")) for n in samplekit.NAMES[:2]]


@fuzz_settings(150)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_any_json_value_is_judged_as_jsonschema_judges_it(data: st.DataObject, name: str) -> None:
    assert_validators_agree(name, data.draw(json_values(_keys(name))))


@fuzz_settings(150)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_a_real_document_with_any_member_is_judged_as_jsonschema_judges_it(
    data: st.DataObject, name: str
) -> None:
    doc = data.draw(st.sampled_from(_samples(name)))
    assert_validators_agree(name, graft(data, doc, json_values(_keys(name), max_leaves=8)))


@fuzz_settings(300)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_a_real_document_changed_a_little_is_judged_as_jsonschema_judges_it(
    data: st.DataObject, name: str
) -> None:
    doc = data.draw(st.sampled_from(_samples(name)))
    assert_validators_agree(name, mutate(data, doc, ["surprise", "Bad Key", *_keys(name)[:8]]))
