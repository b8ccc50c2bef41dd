"""The redaction map: original -> placeholder, for the customer's eyes only.

It is written next to, never into, the bundle (or the offline output), readable by its owner
only, so that the customer can tell which node `ip-10-37-152-9` is when support asks.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..errors import OutputError
from .engine import Redactor

NOTE = (
    "Original values and the placeholders that replaced them in the output named above. "
    "Keep this file to yourself: it is not part of the output and must never be sent with it."
)


def check_map_path(map_path: Path | None, output: Path) -> None:
    """Refuse, before any work, a map path that is the output or inside it, or unwritable."""
    if map_path is None:
        return
    target, out = map_path.resolve(), output.resolve()
    if target == out or out in target.parents:
        raise OutputError(f"the redaction map {map_path} must be outside the output {output}")
    if target.is_dir():
        raise OutputError(f"the redaction map path {map_path} is a directory")
    if not target.parent.is_dir() or not os.access(target.parent, os.W_OK):
        raise OutputError(f"cannot write the redaction map in {map_path.parent}")


def write_map(map_path: Path, redactor: Redactor, output: Path) -> None:
    doc = {"output": str(output), "note": NOTE, "map": redactor.mapping()}
    data = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode()
    fd, tmp = tempfile.mkstemp(prefix=f".{map_path.name}.", dir=map_path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, map_path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write the redaction map {map_path}: {exc.strerror}") from exc
