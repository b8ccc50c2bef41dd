"""Redacting a bundle manifest: every string by pattern, member paths as they were written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .engine import Redactor

MANIFEST = "manifest.json"


def redact_manifest(
    redactor: Redactor, manifest: dict[str, Any], names: Mapping[str, str]
) -> dict[str, Any]:
    """A redacted copy with the redaction summary; `names` maps members as asked to as written.

    Artifact paths are mapped, not pattern-redacted again, so they always name the members
    that exist; everything else (pod names, messages, the context) gets the text pass.
    """
    artifacts = manifest.get("artifacts") or []
    paths = [art.get("paths") for art in artifacts]
    bare = {
        **manifest,
        "artifacts": [{k: v for k, v in art.items() if k != "paths"} for art in artifacts],
    }
    bare.pop("redaction", None)
    out = redactor.redact_strings(bare, member=MANIFEST)
    for art, original in zip(out.get("artifacts") or [], paths, strict=True):
        if original is not None:
            art["paths"] = [names.get(p) or redactor.member_name(p) for p in original]
    out["redaction"] = redactor.summary()
    return out
