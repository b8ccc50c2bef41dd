"""The contract's archive reader in the mode the offline redactor uses: a member the bundle
reader would refuse is handed to `skip` and left out; what concerns the whole archive is still
refused. (Its refusals in tf-analyze: tests/analyzer/test_bad_bundles.py and the fuzzers.)"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from bundlekit import file_member, raw_tar_zst

from tf_support_schemas import archive

LIMITS = archive.Limits(member_bytes=1000, total_bytes=2500, members=10)


def _link(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return info, None


def _read(path: Path) -> tuple[dict[str, bytes], list[str]]:
    skipped: list[str] = []
    found = dict(
        archive.members(path, LIMITS, skip=lambda e: skipped.append(f"{e.member}: {e.why}"))
    )
    return found, skipped


def test_a_refused_member_is_skipped_and_named(tmp_path: Path) -> None:
    path = raw_tar_zst(
        tmp_path / "a.tar.zst",
        [
            file_member("ok.log", b"fine"),
            file_member("../up.log", b"x"),
            file_member("big.log", b"x" * 1001),
            _link("link.log"),
            file_member("ok.log", b"again"),
        ],
    )
    found, skipped = _read(path)
    assert found == {"ok.log": b"fine"}
    assert skipped == [
        "../up.log: contains '..'",
        "big.log: is 1001 bytes, over the 1000-byte cap",
        "link.log: is a link",
        "ok.log: appears twice",
    ]


def test_the_total_cap_still_stops_the_read(tmp_path: Path) -> None:
    members = [file_member(f"{i}.log", b"x" * 900) for i in range(3)]
    path = raw_tar_zst(tmp_path / "t.tar.zst", members)
    with pytest.raises(archive.ArchiveError) as err:
        _read(path)
    assert err.value.problem is archive.Problem.TOO_LARGE
