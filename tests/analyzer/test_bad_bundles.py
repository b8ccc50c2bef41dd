"""Every kind of unreadable bundle gets a one-line error and its own exit code (through the
CLI, with memory and time measured: test_hostile_bundles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundlekit import base_manifest, file_member, manifest_member, raw_tar_zst
from hostilekit import CASES

from analyzer.bundle import Bundle
from analyzer.bundle.archive import Limits
from analyzer.errors import BundleError, ExitCode


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_bundle_is_refused_with_its_code(tmp_path: Path, name: str) -> None:
    make, code, words = CASES[name]
    path = make(tmp_path)
    with pytest.raises(BundleError) as err:
        Bundle.open(path)
    assert err.value.exit_code == code
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_member_over_cap_is_a_bomb(tmp_path: Path) -> None:
    # 64 MiB of zeros compress to a few KiB: the cap must stop it before it is read.
    path = raw_tar_zst(
        tmp_path / "bomb.tar.zst", [manifest_member(), file_member("logs/x.log", b"\0" * 2**26)]
    )
    assert path.stat().st_size < 100_000
    with pytest.raises(BundleError) as err:
        Bundle.open(path, Limits(member_bytes=2**20, total_bytes=2**22))
    assert err.value.exit_code == ExitCode.TOO_LARGE


def test_total_over_cap(tmp_path: Path) -> None:
    members = [manifest_member()] + [file_member(f"logs/{i}.log", b"x" * 600_000) for i in range(4)]
    path = raw_tar_zst(tmp_path / "many.tar.zst", members)
    with pytest.raises(BundleError) as err:
        Bundle.open(path, Limits(member_bytes=2**20, total_bytes=2**21))
    assert err.value.exit_code == ExitCode.TOO_LARGE


def test_directory_with_symlink_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "unpacked"
    root.mkdir()
    (root / "manifest.json").write_text(json.dumps(base_manifest([])))
    (root / "leak.log").symlink_to("/etc/passwd")
    with pytest.raises(BundleError) as err:
        Bundle.open(root)
    assert err.value.exit_code == ExitCode.UNSAFE
