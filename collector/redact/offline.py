"""Redacting what the user already has: a file, a directory, a .tar/.tar.gz/.tar.zst archive.

The output is of the input's kind (a file gives a file, a directory a directory, an archive
an archive of the same compression), appears atomically, and nothing is written outside it.
The input is never modified, and an existing output is never overwritten.

A tf-collect bundle (manifest.json at its root) is redacted as the collector does it:
objects by structure, then by pattern, member names consistently, and the manifest's
redaction summary replaced by this run's. Other JSON and YAML files keep their layout: their
sensitive values are found by parsing and replaced in place. Binary files, links and device
files are left out and listed, since nothing in them can be checked.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..bundle import dump_json
from ..errors import OutputError
from .engine import Redactor
from .manifest import MANIFEST, redact_manifest
from .parallel import redact_members
from .structured import Structured

try:  # Python 3.14+
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the interpreter
    from backports import zstd  # type: ignore[no-redef]

ARCHIVE_KINDS = {
    ".tar.zst": "tar.zst",
    ".tzst": "tar.zst",
    ".tar.gz": "tar.gz",
    ".tgz": "tar.gz",
    ".tar": "tar",
}
MAX_MEMBER = 1 << 30  # a member larger than this is not read into memory
_BINARY_PROBE = 8192


class InputError(ValueError):
    """The input cannot be redacted (missing, unsupported, unsafe); the message says why."""


@dataclass
class OfflineResult:
    output: Path
    kind: str  # file | directory | tar | tar.gz | tar.zst
    bundle: bool  # a tf-collect bundle (manifest.json found)
    files: int = 0
    skipped: list[str] = field(default_factory=list)  # "name: why"
    summary: dict[str, Any] = field(default_factory=dict)


def input_kind(path: Path) -> str:
    if path.is_dir():
        return "directory"
    if not path.is_file():
        raise InputError(f"{path} is neither a file nor a directory")
    name = path.name.lower()
    for suffix, kind in ARCHIVE_KINDS.items():
        if name.endswith(suffix):
            return kind
    return "file"


def redact_path(src: Path, out: Path, redactor: Redactor, *, workers: int = 1) -> OfflineResult:
    """Redact src into out (of src's kind); `workers` processes share large inputs."""
    kind = input_kind(src)
    _check_output(src, out, kind)
    result = OfflineResult(output=out, kind=kind, bundle=False)
    members = dict(_read(src, kind, result))
    if kind == "file":
        ((name, data),) = members.items()
        _write_file(out, _redact_member(redactor, name, data, bundle=False))
        result.files = 1
    else:
        written = _redact_all(redactor, members, result, workers)
        if kind == "directory":
            _write_directory(out, written)
        else:
            _write_archive(out, kind, written, first=MANIFEST if result.bundle else None)
    result.summary = redactor.summary()
    return result


# ------------------------------------------------------------------ checks
def _check_output(src: Path, out: Path, kind: str) -> None:
    s, o = src.resolve(), out.resolve()
    if o == s:
        raise OutputError(f"refusing to overwrite the input {src}: choose another output")
    if s in o.parents:
        raise OutputError(f"the output {out} must not be inside the input {src}")
    if kind == "directory" and o in s.parents:
        raise OutputError(f"the output {out} must not contain the input {src}")
    if out.exists() or out.is_symlink():
        raise OutputError(f"{out} exists; give a new path (nothing is ever overwritten)")
    if not o.parent.is_dir():
        raise OutputError(f"output directory {out.parent} does not exist")
    if kind not in ("file", "directory"):
        wanted = next(sfx for sfx, k in ARCHIVE_KINDS.items() if k == kind)
        if input_kind_of_name(out.name) != kind:
            raise OutputError(
                f"the output of a {kind} archive is a {kind} archive: name it *{wanted}"
            )


def input_kind_of_name(name: str) -> str:
    low = name.lower()
    return next((k for sfx, k in ARCHIVE_KINDS.items() if low.endswith(sfx)), "file")


# ------------------------------------------------------------------ reading
def _read(src: Path, kind: str, result: OfflineResult) -> Iterator[tuple[str, bytes]]:
    if kind == "file":
        data = src.read_bytes()
        if b"\0" in data[:_BINARY_PROBE]:
            raise InputError(f"{src} is a binary file: nothing in it can be checked")
        yield src.name, data
    elif kind == "directory":
        yield from _read_directory(src, result)
    else:
        yield from _read_archive(src, kind, result)


def _read_directory(root: Path, result: OfflineResult) -> Iterator[tuple[str, bytes]]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or not path.is_file():
                result.skipped.append(f"{rel}: not a regular file")
            elif path.stat().st_size > MAX_MEMBER:
                result.skipped.append(f"{rel}: larger than {MAX_MEMBER >> 20} MiB")
            else:
                yield rel, path.read_bytes()


def _read_archive(src: Path, kind: str, result: OfflineResult) -> Iterator[tuple[str, bytes]]:
    seen: set[str] = set()
    try:
        with contextlib.ExitStack() as stack:
            if kind == "tar.zst":
                raw = stack.enter_context(zstd.open(src, "rb"))
                tar = stack.enter_context(tarfile.open(fileobj=raw, mode="r|"))
            else:
                tar = stack.enter_context(tarfile.open(src, "r|gz" if kind == "tar.gz" else "r|"))
            for info in tar:
                name = _safe_member_name(info.name)
                if info.isdir():
                    continue
                if name is None:
                    result.skipped.append(f"{info.name}: unsafe path")
                elif not info.isreg():
                    result.skipped.append(f"{info.name}: not a regular file")
                elif info.size > MAX_MEMBER:
                    result.skipped.append(f"{info.name}: larger than {MAX_MEMBER >> 20} MiB")
                elif name in seen:
                    result.skipped.append(f"{info.name}: duplicate member")
                else:
                    seen.add(name)
                    fh = tar.extractfile(info)
                    yield name, fh.read() if fh else b""
    except (tarfile.TarError, OSError, EOFError, zstd.ZstdError) as exc:
        raise InputError(f"{src} is not a readable {kind} archive: {exc}") from exc


def _safe_member_name(name: str) -> str | None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    clean = "/".join(p for p in path.parts if p not in (".", ""))
    return clean or None


# ------------------------------------------------------------------ redacting
def _redact_all(
    redactor: Redactor, members: dict[str, bytes], result: OfflineResult, workers: int
) -> dict[str, bytes]:
    result.bundle = _is_bundle(members.get(MANIFEST))
    names: dict[str, str] = {}
    todo: list[tuple[str, bytes]] = []
    for name in sorted(members):
        if name == MANIFEST and result.bundle:
            continue
        data = members[name]
        if not result.bundle and b"\0" in data[:_BINARY_PROBE]:
            result.skipped.append(f"{name}: binary (cannot be checked, left out)")
            continue
        new_name = redactor.member_name(name)
        if new_name in names.values():
            result.skipped.append(f"{name}: its redacted name {new_name} is taken")
            continue
        names[name] = new_name
        todo.append((name, data))
    fn = _redact_bundle_member if result.bundle else _redact_plain_member
    outputs = redact_members(redactor, todo, fn, workers=workers)
    written = {names[name]: out for (name, _), out in zip(todo, outputs, strict=True)}
    result.files = len(written)
    if result.bundle:
        manifest = json.loads(members[MANIFEST])
        written[MANIFEST] = dump_json(redact_manifest(redactor, manifest, names))
        result.files += 1
    return written


def _is_bundle(raw: bytes | None) -> bool:
    if raw is None:
        return False
    try:
        manifest = json.loads(raw)
    except ValueError:
        return False
    return isinstance(manifest, dict) and "format_version" in manifest and "artifacts" in manifest


def _redact_bundle_member(redactor: Redactor, name: str, data: bytes) -> bytes:
    return _redact_member(redactor, name, data, bundle=True)


def _redact_plain_member(redactor: Redactor, name: str, data: bytes) -> bytes:
    return _redact_member(redactor, name, data, bundle=False)


def _redact_member(redactor: Redactor, name: str, data: bytes, *, bundle: bool) -> bytes:
    low = name.lower()
    if low.endswith(".json") and bundle:
        # A bundle's JSON members are what the collector wrote: redact them as it does.
        try:
            obj = json.loads(data)
        except ValueError:
            return redactor.redact_bytes(data, member=name)
        return redactor.redact_bytes(
            dump_json(redactor.redact_object(obj, member=name)), member=name
        )
    if low.endswith((".json", ".yaml", ".yml")):
        text = data.decode("utf-8", errors="surrogateescape")
        structured = Structured(redactor.pseudonyms)
        text = structured.redact_document_text(text)
        redactor.record(name, structured.counts)
        data = text.encode("utf-8", errors="surrogateescape")
    return redactor.redact_bytes(data, member=name)


# ------------------------------------------------------------------ writing
def _write_file(out: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_directory(out: Path, members: dict[str, bytes]) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        root = staging.resolve()
        for name, data in members.items():
            target = (staging / name).resolve()
            if root not in target.parents:  # names were made safe on reading; never trust
                raise OutputError(f"member {name} would be written outside {out}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write_archive(out: Path, kind: str, members: dict[str, bytes], first: str | None) -> None:
    order = sorted(members, key=lambda n: (n != first, n))
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            if kind == "tar.zst":
                stream: Any = zstd.ZstdFile(raw, "wb", level=10)
            elif kind == "tar.gz":
                import gzip

                stream = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)
            else:
                stream = raw
            with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for name in order:
                    info = tarfile.TarInfo(name)
                    info.size = len(members[name])
                    info.mode, info.mtime = 0o644, 0
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    tar.addfile(info, io.BytesIO(members[name]))
            if stream is not raw:
                stream.close()
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
