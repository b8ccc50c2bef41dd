"""The contract's validator: Draft 2020-12 with formats checked, built once, one-line errors."""

from __future__ import annotations

from bundlekit import base_manifest

import tf_support_schemas as schemas


def test_each_validator_is_built_once() -> None:
    assert schemas.validator("manifest") is schemas.validator("manifest")


def test_date_time_is_checked() -> None:
    manifest = base_manifest([])
    assert schemas.first_error("manifest", manifest) is None
    bad = {**manifest, "created_at": "2026-13-45T99:00:00Z"}
    assert schemas.first_error("manifest", bad) == (
        "created_at: '2026-13-45T99:00:00Z' is not a 'date-time'"
    )


def test_an_error_names_its_path_in_one_short_line() -> None:
    manifest = base_manifest([])
    huge = {**manifest, "artifacts": "line one\nline two " + "x" * 10_000}
    problem = schemas.first_error("manifest", huge)
    assert problem is not None
    assert problem.startswith("artifacts: 'line one\\nline two xxx")
    assert problem.endswith("xxx' is not of type 'array'")
    assert "\n" not in problem and len(problem) < 250
