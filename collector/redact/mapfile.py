"""The redaction map: original -> placeholder, for the customer's eyes only.

It is written next to, never into, the bundle (or the offline output), readable by its owner
only, so that the customer can tell which node `ip-10-37-152-9` is when support asks.
"""

from __future__ import annotations

import json
from pathlib import Path

import outputs

from ..errors import OutputError
from .engine import Redactor

NOTE = (
    "Original values and the placeholders that replaced them in the output named above. "
    "Keep this file to yourself: it is not part of the output and must never be sent with it."
)
FORCE_HINT = "use --force to replace it"


def check_map_path(map_path: Path | None, output: Path, *, replace: bool = False) -> None:
    """Refuse, before any work, a map path that is the output or inside it, or that may not
    be written (an existing map is replaced only with --force: it names an earlier bundle)."""
    if map_path is None:
        return
    target, out = map_path.resolve(), output.resolve()
    if target == out or out in target.parents:
        raise OutputError(f"the redaction map {map_path} must be outside the output {output}")
    try:
        outputs.check(map_path, replace=replace, what="redaction map", force_hint=FORCE_HINT)
    except outputs.OutputRefused as exc:
        raise OutputError(str(exc)) from None


def write_map(map_path: Path, redactor: Redactor, output: Path, *, replace: bool = False) -> None:
    doc = {"output": str(output), "note": NOTE, "map": redactor.mapping()}
    data = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode()
    try:
        outputs.write(
            map_path, lambda fh: fh.write(data), replace=replace, what="redaction map", mode=0o600
        )
    except outputs.OutputRefused as exc:
        raise OutputError(str(exc)) from None
