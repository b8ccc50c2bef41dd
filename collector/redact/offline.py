"""Redacting what the user already has: a file, a directory, a .tar/.tar.gz/.tar.zst archive.

The input is read by the bundle reader's rules and size policy (tf_support_schemas.archive),
except that a member it would refuse (an unsafe name, a link or device file, a duplicate, a
member over the size cap) is left out and listed. The output is of the input's kind (a file
gives a file, a directory a directory, an archive an archive of the same compression) and is
written under the output policy (outputs/): it appears atomically, nothing is written outside
it, the input is never modified, and an existing output is never overwritten.

A tf-collect bundle (manifest.json at its root) is redacted as the collector does it:
objects by structure, then by pattern, member names consistently, and the manifest's
redaction summary replaced by this run's. Other JSON and YAML files keep their layout: their
sensitive values are found by parsing and replaced in place. Binary files are left out and
listed too, since nothing in them can be checked.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import outputs
from tf_support_schemas import archive

from ..bundle import dump_json
from ..errors import OutputError
from .engine import Redactor
from .manifest import MANIFEST, redact_manifest
from .parallel import redact_members
from .structured import Structured

ARCHIVE_KINDS = {
    ".tar.zst": "tar.zst",
    ".tzst": "tar.zst",
    ".tar.gz": "tar.gz",
    ".tgz": "tar.gz",
    ".tar": "tar",
}
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
    if kind == "file":
        data = _read_file(src)
        _write(out, lambda fh: fh.write(redact_member(redactor, src.name, data, bundle=False)))
        result.files = 1
    else:
        written = _redact_all(redactor, _read(src, kind, result), result, workers)
        if kind == "directory":
            _write(out, written)
        else:
            first = MANIFEST if result.bundle else None
            order = sorted(written, key=lambda n: (n != first, n))

            def fill(fh: IO[bytes]) -> None:
                with archive.tar_writer(fh, kind) as add:
                    for name in order:
                        add(name, io.BytesIO(written[name]))

            _write(out, fill)
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
    if kind not in ("file", "directory"):
        wanted = next(sfx for sfx, k in ARCHIVE_KINDS.items() if k == kind)
        if input_kind_of_name(out.name) != kind:
            raise OutputError(
                f"the output of a {kind} archive is a {kind} archive: name it *{wanted}"
            )
    try:
        outputs.check(out, replace=False, force_hint="give a new path (nothing is overwritten)")
    except outputs.OutputRefused as exc:
        raise OutputError(str(exc)) from None


def input_kind_of_name(name: str) -> str:
    low = name.lower()
    return next((k for sfx, k in ARCHIVE_KINDS.items() if low.endswith(sfx)), "file")


# ------------------------------------------------------------------ reading
def _read_file(src: Path) -> bytes:
    size = src.stat().st_size
    if size > archive.DEFAULT_LIMITS.member_bytes:
        raise InputError(
            f"{src} is {size} bytes, over the {archive.DEFAULT_LIMITS.member_bytes}-byte cap"
        )
    data = src.read_bytes()
    if b"\0" in data[:_BINARY_PROBE]:
        raise InputError(f"{src} is a binary file: nothing in it can be checked")
    return data


def _read(src: Path, kind: str, result: OfflineResult) -> dict[str, bytes]:
    """Every member of a directory or an archive, by the bundle reader's rules: a member it
    would refuse (unsafe name, link, device, duplicate, over the size cap) is left out and
    listed."""

    def skip(problem: archive.ArchiveError) -> None:
        result.skipped.append(f"{problem.member}: {problem.why}")

    try:
        return dict(archive.members(src, kind=kind, skip=skip))
    except archive.ArchiveError as exc:
        raise InputError(str(exc)) from exc


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
    redacted = redact_members(redactor, todo, fn, workers=workers)
    written = {names[name]: out for (name, _), out in zip(todo, redacted, strict=True)}
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
    return redact_member(redactor, name, data, bundle=True)


def _redact_plain_member(redactor: Redactor, name: str, data: bytes) -> bytes:
    return redact_member(redactor, name, data, bundle=False)


def redact_member(redactor: Redactor, name: str, data: bytes, *, bundle: bool) -> bytes:
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
def _write(out: Path, content: Callable[[IO[bytes]], None] | dict[str, bytes]) -> None:
    """A file filled by `content`, or a directory of the files `content` maps, under the
    output policy (nothing existing is replaced, nothing appears half-written); private to
    its owner, as the input may hold what the redaction misses."""
    try:
        if isinstance(content, dict):
            outputs.write_tree(out, content)
        else:
            outputs.write(out, content, replace=False, mode=0o600)
    except outputs.OutputRefused as exc:
        raise OutputError(str(exc)) from None
