"""Reading a bundle: any member's bytes read or refused with one clear error, members streamed
and dropped as a packed or unpacked bundle, errors in their order."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from bundlekit import (
    base_manifest,
    file_member,
    make_bundle,
    manifest_member,
    raw_tar_zst,
    read_members,
    scan,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.bundle import Bundle, parse_json
from analyzer.bundle.archive import Limits
from analyzer.errors import BundleError, ExitCode

SAMPLES = sorted((Path(__file__).parents[2] / "sample_bundles").glob("*.tar.zst"))


@settings(max_examples=400)
@given(raw=st.binary(max_size=40) | st.sampled_from(
    [b"\xef\xbb\xbf{}", '{"a": 1}'.encode("utf-16"), b'"\\ud800"', b"NaN", b"[1,]", b"01",
     b"1e400", b'{"a":1,"a":2}', b"\xff", b"-0", b" 1 ", b"", b"[" * 5000]
))  # fmt: skip
def test_any_bytes_are_read_or_refused_as_a_bad_manifest(raw: bytes) -> None:
    try:
        parse_json(raw, "m")
    except BundleError as exc:
        assert exc.exit_code == ExitCode.MANIFEST
        assert str(exc).startswith("m is ")


def test_integers_stay_exact() -> None:
    value = parse_json(b'{"a": [123456789012345678901234567890, -9223372036854775809]}', "m")
    assert value == {"a": [123456789012345678901234567890, -9223372036854775809]}


def test_repeated_strings_are_one_string_across_a_bundle(tmp_path: Path) -> None:
    # A large bundle repeats names, labels and images across thousands of objects: held once,
    # a 10,000-pod bundle takes a third less memory (bench/analyze_scale.py).
    pods = [
        {"metadata": {"name": f"p{i}", "namespace": f"n{i}", "labels": {"app": "same"}}}
        for i in range(3)
    ]
    bundle = Bundle.open(make_bundle(tmp_path / "b.tar.zst", objects={("", "pods"): pods}))
    labels = [p["metadata"]["labels"]["app"] for p in bundle.objects("pods")]
    assert labels == ["same"] * 3 and labels[0] is labels[1] is labels[2]


@pytest.mark.parametrize("depth", [10, 5000, 200_000])
def test_nesting_past_the_recursion_limit_is_refused(depth: int) -> None:
    raw = b"[" * depth + b"]" * depth
    if depth < 100:
        assert parse_json(raw, "m") is not None
        return
    with pytest.raises(BundleError) as err:
        parse_json(raw, "m")
    assert err.value.exit_code == ExitCode.MANIFEST
    assert "nested too deeply" in str(err.value)


# ---------------------------------------------------------------- streaming the members


def _unpacked(bundle: Path, root: Path) -> Path:
    for name, data in read_members(bundle).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_an_unpacked_directory_reads_as_its_bundle(tmp_path: Path) -> None:
    assert read_members(_unpacked(SAMPLES[0], tmp_path / "dir")) == read_members(SAMPLES[0])
    packed = Bundle.open(SAMPLES[0])
    unpacked = Bundle.open(tmp_path / "dir")
    assert unpacked.resources() == packed.resources()
    for group, resource in packed.resources():
        assert unpacked.objects(resource, group=group) == packed.objects(resource, group=group)
    assert unpacked.logs() == packed.logs()
    assert unpacked.possible_secrets() == packed.possible_secrets()


def _listing(name: str) -> dict[str, Any]:
    return {"kind": "PodList", "items": [{"metadata": {"name": name, "namespace": "n"}}]}


def _objects_art(art_id: str, member: str) -> dict[str, Any]:
    return {
        "id": art_id, "step": "t", "type": "objects", "status": "ok", "group": "",
        "version": "v1", "resource": "pods", "kind": "Pod", "namespaced": True,
        "namespace": "n", "paths": [member],
    }  # fmt: skip


def test_members_before_the_manifest_are_read_too(tmp_path: Path) -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4eHh4eHh4eCJ9.c2lnbmF0dXJlc2ln"
    path = raw_tar_zst(
        tmp_path / "late.tar.zst",
        [
            file_member("objects/pods/n.json", json.dumps(_listing(f"p-{jwt}")).encode()),
            file_member("unlisted.txt", b"nothing reads this"),
            manifest_member(base_manifest([_objects_art("a", "objects/pods/n.json")])),
        ],
    )
    bundle = Bundle.open(path)
    assert [p["metadata"]["name"] for p in bundle.objects("pods")] == [f"p-{jwt}"]
    members = read_members(path)
    del members["manifest.json"]
    assert bundle.possible_secrets() == scan(members)
    assert [leak.member for leak in bundle.possible_secrets()] == ["objects/pods/n.json"]


def test_bad_listings_are_reported_in_the_manifests_order(tmp_path: Path) -> None:
    arts = [_objects_art("a", "objects/pods/a.json"), _objects_art("b", "objects/pods/b.json")]
    path = raw_tar_zst(
        tmp_path / "bad.tar.zst",
        [
            manifest_member(base_manifest(arts)),
            file_member("objects/pods/b.json", b"{not json"),
            file_member("objects/pods/a.json", b"[" * 5000 + b"]" * 5000),
        ],
    )
    with pytest.raises(BundleError) as err:
        Bundle.open(path)
    assert "objects/pods/a.json is nested too deeply" in str(err.value)


def test_archive_errors_come_before_a_bad_listing(tmp_path: Path) -> None:
    path = raw_tar_zst(
        tmp_path / "both.tar.zst",
        [
            manifest_member(base_manifest([_objects_art("a", "objects/pods/a.json")])),
            file_member("objects/pods/a.json", b"{not json"),
            file_member("../escape", b"x"),
        ],
    )
    with pytest.raises(BundleError) as err:
        Bundle.open(path)
    assert err.value.exit_code == ExitCode.UNSAFE


def test_a_huge_pax_header_is_over_the_member_cap(tmp_path: Path) -> None:
    # tarfile reads a pax header whole: without a cap on each read, a few kB of zstd
    # could claim any amount of memory before a member's own size is checked.
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    path = raw_tar_zst(tmp_path / "pax.tar.zst", [(header, b"\0" * (3 * 2**20)), manifest_member()])
    with pytest.raises(BundleError) as err:
        Bundle.open(path, Limits(member_bytes=2**20))
    assert err.value.exit_code == ExitCode.TOO_LARGE
