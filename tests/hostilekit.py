"""Unreadable and unsafe bundles, one builder each, with the exit code and the words of its
one-line refusal: read in-process by test_bad_bundles, through the CLI by test_hostile_bundles."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from bundlekit import base_manifest, file_member, make_bundle, manifest_member, raw_tar_zst

from analyzer.errors import ExitCode


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def _device(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info, None


def _good(tmp: Path) -> Path:
    return make_bundle(tmp / "good.tar.zst", objects={("", "pods"): []})


def _truncated(tmp: Path) -> Path:
    good = _good(tmp).read_bytes()
    path = tmp / "cut.tar.zst"
    path.write_bytes(good[: len(good) // 2])
    return path


def _gzip(tmp: Path) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info, data = manifest_member()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path = tmp / "renamed.tar.zst"
    path.write_bytes(gzip.compress(buf.getvalue()))
    return path


def _write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


CASES = {
    "empty file": (lambda t: _write(t, "empty.tar.zst", b""), ExitCode.NOT_A_BUNDLE, "empty file"),
    "not zstd": (
        lambda t: _write(t, "x.tar.zst", b"hello world, not a bundle"),
        ExitCode.NOT_A_BUNDLE,
        "not a zstd-compressed bundle",
    ),
    "gzip renamed": (_gzip, ExitCode.NOT_A_BUNDLE, "gzip archive"),
    "truncated stream": (_truncated, ExitCode.TRUNCATED, "ends early"),
    "no manifest": (
        lambda t: raw_tar_zst(t / "nm.tar.zst", [file_member("a.txt", b"x")]),
        ExitCode.MANIFEST,
        "no manifest.json",
    ),
    "manifest not json": (
        lambda t: raw_tar_zst(t / "mj.tar.zst", [file_member("manifest.json", b"{nope")]),
        ExitCode.MANIFEST,
        "not valid JSON",
    ),
    "manifest invalid": (
        lambda t: raw_tar_zst(
            t / "mi.tar.zst", [manifest_member({**base_manifest([]), "surprise": 1})]
        ),
        ExitCode.MANIFEST,
        "surprise",
    ),
    "future format": (
        lambda t: raw_tar_zst(
            t / "fv.tar.zst", [manifest_member({**base_manifest([]), "format_version": 2})]
        ),
        ExitCode.UNSUPPORTED,
        "format_version 2",
    ),
    "absolute path": (
        lambda t: raw_tar_zst(
            t / "abs.tar.zst", [manifest_member(), file_member("/etc/cron.d/x", b"boom")]
        ),
        ExitCode.UNSAFE,
        "absolute",
    ),
    "dot-dot path": (
        lambda t: raw_tar_zst(
            t / "dd.tar.zst", [manifest_member(), file_member("logs/../../escape.txt", b"boom")]
        ),
        ExitCode.UNSAFE,
        "'..'",
    ),
    "symlink": (
        lambda t: raw_tar_zst(
            t / "sl.tar.zst",
            [manifest_member(), _link("logs/x.log", "/etc/passwd", tarfile.SYMTYPE)],
        ),
        ExitCode.UNSAFE,
        "is a link",
    ),
    "hard link": (
        lambda t: raw_tar_zst(
            t / "hl.tar.zst",
            [manifest_member(), _link("logs/x.log", "manifest.json", tarfile.LNKTYPE)],
        ),
        ExitCode.UNSAFE,
        "is a link",
    ),
    "device file": (
        lambda t: raw_tar_zst(t / "dev.tar.zst", [manifest_member(), _device("dev/null")]),
        ExitCode.UNSAFE,
        "special file",
    ),
    "duplicate member": (
        lambda t: raw_tar_zst(
            t / "dup.tar.zst",
            [manifest_member(), file_member("a.log", b"1"), file_member("a.log", b"2")],
        ),
        ExitCode.UNSAFE,
        "appears twice",
    ),
    "missing member": (
        lambda t: raw_tar_zst(
            t / "mm.tar.zst",
            [
                manifest_member(
                    base_manifest(
                        [
                            {
                                "id": "x",
                                "step": "s",
                                "type": "log",
                                "status": "ok",
                                "namespace": "n",
                                "pod": "p",
                                "container": "c",
                                "paths": ["logs/n/p/c.log"],
                            }
                        ]
                    )
                )
            ],
        ),
        ExitCode.MANIFEST,
        "not in the bundle",
    ),
}
