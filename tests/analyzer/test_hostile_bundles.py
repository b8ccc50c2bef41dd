"""Hostile bundles through the real tf-analyze, each in its own process with its memory measured.

The bound: tf-analyze needs less than MEMORY_BOUND_MB of resident memory on each of
these, whatever the archive claims to hold (caps: 256 MiB a member, 1 GiB in all).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from bundlekit import base_manifest, file_member, make_bundle, manifest_member, raw_tar_zst
from hostilekit import CASES as BAD_BUNDLES

from analyzer.errors import ExitCode
from tf_support_schemas.archive import zstd

MEMORY_BOUND_MB = 150  # measured: 38-40 MB for every case here on Python 3.11.7
SECONDS = 60
GIB = 1024**3


class _Repeat:
    """A file object of `size` copies of one byte, never held in memory at once."""

    def __init__(self, size: int, byte: bytes) -> None:
        self.left, self.block = size, byte * (1 << 20)

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return self.block[:n] if n <= len(self.block) else self.block * (n // len(self.block))


def _streamed(path: Path, name: str, size: int, byte: bytes) -> Path:
    """A valid manifest, then one member of `size` bytes of `byte`: a tiny file, a huge member."""
    with (
        zstd.ZstdFile(path, "wb", level=1) as zf,
        tarfile.open(fileobj=zf, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        info, data = manifest_member()
        info.size = len(data)
        tar.addfile(info, __import__("io").BytesIO(data))
        big = tarfile.TarInfo(name)
        big.size = size
        tar.addfile(big, _Repeat(size, byte))
    return path


def _log_artifact(member: str) -> dict:
    return {
        "id": "log:x", "step": "t", "type": "log", "status": "ok", "namespace": "n",
        "pod": "p", "container": "c", "previous": False, "paths": [member],
    }  # fmt: skip


def _nested(tmp: Path) -> Path:
    # 200,000 nested lists: a recursive parser would blow the stack.
    depth = 200_000
    member = "objects/core/pods/n.json"
    art = {
        "id": "objects:pods:n", "step": "t", "type": "objects", "status": "ok", "group": "",
        "version": "v1", "resource": "pods", "kind": "Pod", "namespaced": True,
        "namespace": "n", "paths": [member],
    }  # fmt: skip
    body = b'{"kind":"PodList","items":' + b"[" * depth + b"]" * depth + b"}"
    return raw_tar_zst(
        tmp / "nested.tar.zst", [manifest_member(base_manifest([art])), file_member(member, body)]
    )


def _bad_utf8(tmp: Path) -> Path:
    logs = {("tensor-fusion-sys", "p", "c", False): "ok line\n"}
    path = make_bundle(tmp / "utf8.tar.zst", logs=logs)
    # Re-pack with the log replaced by bytes that are not UTF-8 at all.
    raw = zstd.decompress(path.read_bytes())
    members = []
    import io

    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        for info in tar.getmembers():
            data = tar.extractfile(info).read()
            if info.name.startswith("logs/"):
                data = b"\xff\xfe\xfa broken \xc3\x28 line\n" + data
            members.append((tarfile.TarInfo(info.name), data))
    return raw_tar_zst(tmp / "utf8.tar.zst", members)


CASES = {
    # 2 GiB of zeros in a ~100 kB file: stopped at the member cap, never inflated.
    "zstd bomb": (lambda t: _streamed(t / "bomb.tar.zst", "logs/n/p/c.log", 2 * GIB, b"\0"),
                  ExitCode.TOO_LARGE),
    # One 2 GiB line, no newline anywhere.
    "2 GiB line": (lambda t: _streamed(t / "line.tar.zst", "logs/n/p/c.log", 2 * GIB, b"x"),
                   ExitCode.TOO_LARGE),
    "deeply nested JSON": (_nested, ExitCode.MANIFEST),
    "hard link outside": (
        lambda t: raw_tar_zst(t / "hl.tar.zst", [manifest_member(), _link("logs/x.log")]),
        ExitCode.UNSAFE,
    ),
    "invalid UTF-8 log": (_bad_utf8, ExitCode.OK),
}  # fmt: skip


def _link(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = "../../../../etc/shadow"
    return info, None


# Measured by a small fresh interpreter around tf-analyze: a child forked straight from pytest
# would count pytest's own pages in its peak RSS.
_MEASURE = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)"
)


def _analyze(bundle: Path, out: Path) -> tuple[int, str, float, float]:
    """Exit code, stderr, seconds and peak RSS (MB) of one tf-analyze process."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "analyzer", str(bundle),
         "--format", "json", "-o", str(out)],
        capture_output=True, text=True, timeout=SECONDS * 2,
    )  # fmt: skip
    rss_kb, code = proc.stdout.split()
    return int(code), proc.stderr, time.monotonic() - t0, int(rss_kb) / 1024


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_bundle(tmp_path: Path, name: str) -> None:
    make, code = CASES[name]
    _check(tmp_path, name, make(tmp_path), code)


@pytest.mark.parametrize("name", sorted(BAD_BUNDLES))
def test_unsafe_or_unreadable_bundle(tmp_path: Path, name: str) -> None:
    # Paths, links, devices, duplicates, no or bad manifest, absent members, gzip, empty...
    make, code, words = BAD_BUNDLES[name]
    stderr = _check(tmp_path, name, make(tmp_path), code)
    assert words in stderr, stderr


def _check(tmp_path: Path, name: str, bundle: Path, code: int) -> str:
    """tf-analyze on `bundle`: its exit code, within the memory and time bounds, one line
    and nothing written anywhere when it refuses; returns stderr."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    rc, stderr, seconds, rss_mb = _analyze(bundle, out_dir / "r.json")
    assert rc == code, stderr
    assert "Traceback" not in stderr
    assert rss_mb < MEMORY_BOUND_MB, f"{name}: peak RSS {rss_mb:.0f} MB"
    assert seconds < SECONDS, f"{name}: {seconds:.1f} s"
    if code == ExitCode.OK:
        report = json.loads((out_dir / "r.json").read_text())
        assert report["bundle"]
        return stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tf-analyze: "), stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written anywhere
    return stderr
