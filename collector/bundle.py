"""The bundle writer: the only collector code that knows member paths.

Members are staged in a private directory next to the output while the collection runs
(the manifest, which must come first in the tar stream, is only known at the end), then
streamed into one tar + zstd file that appears under its final name by an atomic rename.
An interrupted or failed run leaves nothing at the final path and removes what it staged.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import threading
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import outputs
import tf_support_schemas as schemas
from tf_support_schemas.archive import tar_writer

from .budget import newest_lines
from .errors import OutputError
from .redact import Redactor, Structure
from .redact.manifest import redact_manifest

FORCE_HINT = "use --force to replace it (it may be the bundle a --baseline needs)"

MANIFEST = "manifest.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(part: str) -> str:
    """One path component from a cluster-supplied name (never empty, never '.' or '..')."""
    cleaned = _UNSAFE.sub("_", part) or "_"
    return "_" + cleaned if cleaned in {".", ".."} else cleaned


def objects_member(resource: str, group: str, namespace: str | None) -> str:
    folder = f"{resource}.{group}" if group else resource
    return f"objects/{safe_name(folder)}/{safe_name(namespace) if namespace else '_cluster'}.json"


def log_member(namespace: str, pod: str, container: str, previous: bool) -> str:
    suffix = ".previous.log" if previous else ".log"
    return f"logs/{safe_name(namespace)}/{safe_name(pod)}/{safe_name(container)}{suffix}"


def grep_member(namespace: str, pod: str, container: str, label: str) -> str:
    return f"logs/{safe_name(namespace)}/{safe_name(pod)}/{safe_name(container)}.{safe_name(label)}.log"


def exec_member(namespace: str, pod: str, container: str, check: str) -> str:
    return f"exec/{safe_name(namespace)}/{safe_name(pod)}/{safe_name(container)}/{safe_name(check)}.txt"


def helm_member(release: str) -> str:
    return f"helm/{safe_name(release)}.json"


def metrics_member(table: str) -> str:
    return f"metrics/{safe_name(table)}.json"


_compact = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode


def dump_json(obj: Any) -> bytes:
    """Sorted JSON, one top-level key per line and one list item per line.

    Line-per-item keeps two bundles diffable object by object and lets the C encoder do the
    work (with `indent`, the json module falls back to its pure-Python encoder).
    """
    if not isinstance(obj, dict) or not obj:
        return (_compact(obj) + "\n").encode()
    parts = []
    for key in sorted(obj):
        value = obj[key]
        if isinstance(value, list) and value:
            body = ",\n".join(_compact(item) for item in value)
            parts.append(f"{_compact(key)}:[\n{body}\n]")
        else:
            parts.append(f"{_compact(key)}:{_compact(value)}")
    return ("{" + ",\n".join(parts) + "}\n").encode()


class BundleWriter:
    """Stages members and writes the final ``.tar.zst`` atomically.

    Every byte and every member name goes through the run's redactor before it is staged,
    and so does the manifest: there is no way to write around it. Without a redactor given,
    the writer makes its own (redaction is never off).
    """

    def __init__(
        self, final_path: Path, *, redactor: Redactor | None = None, replace: bool = False
    ) -> None:
        self.final_path = final_path
        self.replace = replace  # --force: an existing regular file may be replaced
        self.redactor = redactor if redactor is not None else Redactor()
        parent = final_path.parent
        try:
            outputs.check(final_path, replace=replace, what="bundle", force_hint=FORCE_HINT)
        except outputs.OutputRefused as exc:
            raise OutputError(str(exc)) from None
        try:
            self._staging = outputs.staging(final_path)
        except OSError as exc:
            raise OutputError(f"cannot stage the bundle in {parent}: {exc.strerror}") from exc
        self._members: set[str] = set()
        self._names: dict[str, str] = {}  # member as asked -> member as written (redacted)
        self._tmp: Path | None = None
        self.committed = False  # the bundle is complete at final_path
        # After abort() nothing is staged: a worker thread a Ctrl-C did not wait for would
        # otherwise make the staging directory again, and leave it behind.
        self._lock = threading.Lock()
        self._aborted = False

    @property
    def members(self) -> list[str]:
        return sorted(self._members)

    def put(self, member: str, data: bytes) -> None:
        """Stage one member, redacted by pattern (names too)."""
        if member == MANIFEST or member in self._names:
            raise ValueError(f"member {member} written twice")
        name = self.redactor.member_name(member)
        if name in self._members:
            raise ValueError(f"member {member} written twice (as {name})")
        self._names[member] = name
        data = self.redactor.redact_bytes(data, member=member)
        target = self._staging / name
        with self._lock:
            if self._aborted:
                raise OutputError("the bundle was abandoned")
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                target.write_bytes(data)
            except OSError as exc:
                raise OutputError(f"cannot write the bundle: {exc.strerror}") from exc
            self._members.add(name)

    def put_object(self, member: str, obj: Any) -> None:
        """Stage decoded JSON: redacted by structure before it is serialised, then by pattern."""
        self.put(member, dump_json(self.redactor.redact_object(obj, member=member)))

    def put_listing(self, member: str, head: dict[str, Any], items: list[Structure]) -> None:
        """Stage a list object whose items already had their structural pass (as they came
        in, off the critical path); the serialised whole still goes through the pattern pass."""
        counts: Counter[str] = Counter()
        for item in items:
            counts.update(item.counts)
        self.redactor.record(member, counts)
        listing = {**self.redactor.redact_object(head, member=member)}
        listing["items"] = [item.value for item in items]
        self.put(member, dump_json(listing))

    def size_of(self, member: str) -> int:
        return (self._staging / self._names.get(member, member)).stat().st_size

    def staged(self) -> dict[str, int]:
        """Every member staged so far (as it was asked for) and its size in bytes."""
        return {member: self.size_of(member) for member in sorted(self._names)}

    def read_staged(self, member: str) -> bytes:
        return (self._staging / self._names[member]).read_bytes()

    def trim_to_newest(self, member: str, max_bytes: int) -> int:
        """Keep the newest whole lines of a staged text member within max_bytes; returns the
        lines dropped. What stays is a suffix of already redacted bytes: nothing to redact."""
        kept, dropped = newest_lines(self.read_staged(member), max_bytes)
        if dropped:
            try:
                (self._staging / self._names[member]).write_bytes(kept)
            except OSError as exc:
                raise OutputError(f"cannot write the bundle: {exc.strerror}") from exc
        return dropped

    def finish(self, manifest: dict[str, Any]) -> Path:
        """Redact and validate the manifest, write the archive and move it into place."""
        manifest = redact_manifest(self.redactor, manifest, self._names)
        problem = schemas.first_error("manifest", manifest)
        if problem:
            raise ValueError(f"manifest does not match its schema: {problem}")
        mtime = int(
            datetime.fromisoformat(manifest["created_at"].replace("Z", "+00:00")).timestamp()
        )
        try:
            # Private to its owner until the user sends it.
            raw, self._tmp = outputs.temporary(self.final_path, mode=0o600)
            with raw:
                with tar_writer(raw, mtime=mtime) as add:
                    add(MANIFEST, io.BytesIO(dump_json(manifest)))
                    for member in self.members:
                        with open(self._staging / member, "rb") as fh:
                            add(member, fh)
                raw.flush()
                os.fsync(raw.fileno())
            shutil.rmtree(self._staging, ignore_errors=True)
            self._commit()
        except OSError as exc:
            raise OutputError(f"cannot write {self.final_path}: {exc.strerror or exc}") from exc
        finally:
            if not self.committed:
                self.abort()
        return self.final_path

    def _commit(self) -> None:
        # The one step that makes the bundle exist. Ctrl-C is held back across it, so that
        # "committed" is true exactly when the file is at its final path.
        blocked = {signal.SIGINT, signal.SIGTERM}
        masked = threading.current_thread() is threading.main_thread()
        if masked:
            signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            assert self._tmp is not None
            try:
                outputs.publish(self._tmp, self.final_path, replace=self.replace)
            except outputs.OutputRefused as exc:
                raise OutputError(str(exc)) from None
            self._tmp = None
            self.committed = True
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)

    def abort(self) -> None:
        """Remove everything staged; safe to call more than once."""
        with self._lock:
            self._aborted = True
            shutil.rmtree(self._staging, ignore_errors=True)
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None
