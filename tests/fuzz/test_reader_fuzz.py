"""The bundle reader on random input: any bytes, any tar archive, any manifest.

Property: `Bundle.open` either opens the bundle or refuses it with a BundleError that carries
one of the reader's exit codes and a one-line message; no other exception escapes, and
nothing is written to disk (neither in the working directory nor beside the bundle). The
fixed cases of each kind are in tests/analyzer/test_bad_bundles.py; these are random.
"""

from __future__ import annotations

import json
import os
import random
import tarfile
import tempfile
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bundlekit import base_manifest, file_member, make_bundle, operator_pod, raw_tar, read_members
from fuzzkit import fuzz_settings
from hypothesis import event, example, given
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from schemakit import mutate

import tf_support_schemas as schemas
from analyzer.bundle import Bundle
from analyzer.bundle.archive import DEFAULT_LIMITS, Limits
from analyzer.errors import BundleError, ExitCode
from tf_support_schemas.archive import zstd

READER_CODES = {
    ExitCode.NOT_A_BUNDLE,
    ExitCode.TRUNCATED,
    ExitCode.MANIFEST,
    ExitCode.UNSUPPORTED,
    ExitCode.UNSAFE,
    ExitCode.TOO_LARGE,
}
SMALL = Limits(member_bytes=512, total_bytes=1024, members=3)


def outcome(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Bundle | BundleError:
    """Open `data` as a bundle file from an empty working directory; check what came out."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd, inbox = Path(tmp, "cwd"), Path(tmp, "in")
        cwd.mkdir()
        inbox.mkdir()
        path = inbox / "bundle.tar.zst"
        path.write_bytes(data)
        before = os.getcwd()
        os.chdir(cwd)
        try:
            result: Bundle | BundleError = Bundle.open(path, limits)
            result.possible_secrets()  # reads every member again
            result.logs()
            result.failed_artifacts()
        except BundleError as exc:
            result = exc
        finally:
            os.chdir(before)
        assert list(cwd.iterdir()) == []
        assert list(inbox.iterdir()) == [path]
    if currently_in_test_context():  # seen with --hypothesis-show-statistics
        event("opened" if isinstance(result, Bundle) else f"refused: {result.exit_code.name}")
    if isinstance(result, BundleError):
        message = str(result)
        assert result.exit_code in READER_CODES, (result.exit_code, message)
        assert message and "\n" not in message and "\r" not in message, message
    return result


def tar_zst(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    return zstd.compress(raw_tar(members))


# ---------------------------------------------------------------------------- any bytes
_HEADS = st.sampled_from([b"", b"\x28\xb5\x2f\xfd", b"\x1f\x8b", b"ustar", b"{"])


@fuzz_settings(150)
@given(head=_HEADS, tail=st.binary(max_size=200), compress=st.booleans(), small=st.booleans())
@example(head=b"\x28\xb5\x2f\xfd", tail=b"", compress=False, small=False)
@example(head=b"", tail=b"\0" * 1024, compress=True, small=False)
def test_any_bytes_open_or_are_refused(
    head: bytes, tail: bytes, compress: bool, small: bool
) -> None:
    data = head + tail
    result = outcome(zstd.compress(data) if compress else data, SMALL if small else DEFAULT_LIMITS)
    assert isinstance(result, BundleError)  # none of these holds a manifest


# ---------------------------------------------------------------------------- any tar
_ODD_NAMES = ["manifest.json", "./manifest.json", "logs/a.log", "logs//a.log", "objects/pods/n.json",
              "../x", "a/../../b", "a/..", "..", ".", "", "/", "/etc/passwd", "//x", "C:/x", "c:x",
              "dir/", "a/./b", "x" * 120 + "/y", "caf\u00e9/\u65e5\u672c", "a\nb", "a\\..\\b"]  # fmt: skip
_NAMES = st.one_of(
    st.sampled_from(["manifest.json", "logs/a.log", "b"]),
    st.sampled_from(_ODD_NAMES),
    st.lists(
        st.sampled_from(["a", "..", ".", "", "logs", "manifest.json"]), min_size=1, max_size=4
    ).map("/".join),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=10),
)
_TYPES = st.sampled_from(
    [tarfile.REGTYPE] * 4
    + [tarfile.CONTTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE,
       tarfile.BLKTYPE, tarfile.FIFOTYPE]
)  # fmt: skip


@cache
def _manifest_bytes() -> bytes:
    return json.dumps(base_manifest([])).encode()


_DATA = st.one_of(
    st.binary(max_size=64),
    st.just(b"manifest"),  # replaced by a valid manifest
    st.sampled_from([b"{}", b"[]", b'{"format_version": 2}', b'{"format_version": 1}', b"null"]),
)


@st.composite
def members(draw: st.DrawFn) -> list[tuple[str, bytes, bytes, str]]:
    """(name, type, data, link target) of each member; sometimes a copy of an earlier one."""
    found: list[tuple[str, bytes, bytes, str]] = []
    if draw(st.booleans()):
        found.append(("manifest.json", tarfile.REGTYPE, _manifest_bytes(), ""))
    for _ in range(draw(st.integers(0, 6))):
        if found and draw(st.integers(0, 5)) == 0:
            found.append(draw(st.sampled_from(found)))
            continue
        data = draw(_DATA)
        found.append(
            (
                draw(_NAMES),
                draw(_TYPES),
                _manifest_bytes() if data == b"manifest" else data,
                draw(_NAMES),
            )
        )
    return found


def _info(name: str, kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        info.linkname = target
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info


def _seen_as(name: str, kind: bytes) -> str:
    """The name a tar reader sees: a directory's trailing slashes are the format's own."""
    return name.rstrip("/") if kind == tarfile.DIRTYPE else name


def _escapes(name: str) -> bool:
    parts = name.split("/")
    return (
        name.startswith("/")
        or name[1:2] == ":"
        or ".." in parts
        or not any(p not in ("", ".") for p in parts)
    )


def unsafe(entries: list[tuple[str, bytes, bytes, str]]) -> bool:
    """What SECURITY.md promises to refuse: absolute or '..' paths, links, devices and
    duplicate members. Judged here from what was written, not with the reader's code."""
    files: list[str] = []
    for name, kind, _, _ in entries:
        seen = _seen_as(name, kind)
        if _escapes(seen) or kind not in (tarfile.REGTYPE, tarfile.CONTTYPE, tarfile.DIRTYPE):
            return True
        if kind != tarfile.DIRTYPE:
            files.append("/".join(p for p in seen.split("/") if p not in ("", ".")))
    return len(files) != len(set(files))


_MANIFEST = ("manifest.json", tarfile.REGTYPE, b"manifest", "")


@fuzz_settings(150)
@given(
    entries=members(),
    small=st.booleans(),
    cut=st.none() | st.none() | st.none() | st.integers(0, 4000),
)
@example(entries=[_MANIFEST, ("a/..", tarfile.DIRTYPE, b"", "")], small=False, cut=None)
@example(entries=[_MANIFEST, ("x", tarfile.SYMTYPE, b"", "..")], small=False, cut=None)
def test_any_tar_opens_or_is_refused(
    entries: list[tuple[str, bytes, bytes, str]], small: bool, cut: int | None
) -> None:
    entries = [(n, k, _manifest_bytes() if d == b"manifest" else d, t) for n, k, d, t in entries]
    tar = [
        (_info(name, kind, target), data if kind in (tarfile.REGTYPE, tarfile.CONTTYPE) else None)
        for name, kind, data, target in entries
    ]
    whole = tar_zst(tar)
    data = whole if cut is None else whole[: cut % (len(whole) + 1)]
    result = outcome(data, SMALL if small else DEFAULT_LIMITS)
    if len(data) < len(whole):
        return  # a cut archive: any of the reader's refusals
    if unsafe(entries):
        assert isinstance(result, BundleError), "an unsafe archive was opened"
        expected = {ExitCode.UNSAFE, ExitCode.TOO_LARGE} if small else {ExitCode.UNSAFE}
        assert result.exit_code in expected, str(result)
    elif not any(k != tarfile.DIRTYPE for _, k, _, _ in entries):
        assert isinstance(result, BundleError) and result.exit_code == ExitCode.NOT_A_BUNDLE


# ------------------------------------------------------------------- a mutated manifest
@cache
def _real_members() -> dict[str, bytes]:
    """A small but real bundle: pods, a log, a failed step, through the real writer."""
    failed = {
        "id": "objects:nodes:", "step": "nodes", "type": "objects", "status": "forbidden",
        "message": "nodes is forbidden", "group": "", "version": "v1", "resource": "nodes",
        "kind": "Node", "namespaced": False, "namespace": None, "paths": [],
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        path = make_bundle(
            Path(tmp, "real.tar.zst"),
            objects={("", "pods"): [operator_pod("tf-operator-0", "OOMKilled")]},
            logs={("tensor-fusion-sys", "tf-operator-0", "controller", False): "E0101 boom\n"},
            failed=[failed],
        )
        return read_members(path)


_KEYS = ["surprise", "paths", "status", "type", "namespace", "pod", "container", "previous",
         "argv", "exit_code", "check", "items", "resource", "kind", "format_version", "id"]  # fmt: skip
_ODD = [None, True, False, 0, 1, -1, 1.5, 2, "", "ok", "log", "exec", "helm", "metrics",
        "objects", "truncated", "error", "x y", [], ["logs/nope.log"], ["manifest.json"],
        {}, {"a": 1}, 2**70, "2026-11-30T10:00:00Z", "../../x"]  # fmt: skip
_LISTING = st.sampled_from(
    [b"{", b"[]", b'{"items": 1}', b'{"items": [1, {"metadata": 2}]}', b"\xff\xfe", b'"x"']
)


LOG = "logs/tensor-fusion-sys/tf-operator-0/controller.log"


@st.composite
def manifests(draw: st.DrawFn) -> Any:
    """The real bundle's manifest, mostly with a few things changed (schemakit.mutate)."""
    manifest = json.loads(_real_members()["manifest.json"])
    if draw(st.integers(0, 3)):
        manifest = mutate(SimpleNamespace(draw=draw), manifest, _KEYS, _ODD, depth=4)
    return manifest


# Found by this test: a log artifact without its pod passed the schema and met a KeyError.
_NO_POD = base_manifest(
    [{"id": "log:x", "step": "t", "type": "log", "status": "ok",
      "namespace": "tensor-fusion-sys", "container": "controller", "paths": [LOG]}]
)  # fmt: skip


@fuzz_settings(200)
@given(
    manifest=manifests(),
    victim=st.none() | st.tuples(st.integers(0, 9), st.none() | _LISTING),
    seed=st.integers(0, 2**16),
)
@example(manifest=_NO_POD, victim=None, seed=0)
def test_a_mutated_manifest_opens_or_is_refused(
    manifest: Any, victim: tuple[int, bytes | None] | None, seed: int
) -> None:
    """Members dropped or spoilt, in any order: the manifest need not come first."""
    raw = {k: v for k, v in _real_members().items() if k != "manifest.json"}
    if victim is not None:
        name = sorted(raw)[victim[0] % len(raw)]
        if victim[1] is None:
            del raw[name]
        else:
            raw[name] = victim[1]
    raw["manifest.json"] = json.dumps(manifest).encode()
    order = sorted(raw)
    random.Random(seed).shuffle(order)
    result = outcome(tar_zst([file_member(name, raw[name]) for name in order]))
    if not isinstance(manifest, dict) or schemas.first_error("manifest", manifest):
        assert isinstance(result, BundleError), "a manifest that fails its schema was read"
        assert result.exit_code in (ExitCode.MANIFEST, ExitCode.UNSUPPORTED), str(result)


def test_the_real_bundle_opens() -> None:
    members = _real_members()
    assert isinstance(outcome(tar_zst([file_member(n, d) for n, d in members.items()])), Bundle)
