"""The Helm release of TensorFusion, reduced to what diagnosis needs.

Helm 3 keeps each release revision in a Secret (or a ConfigMap with HELM_DRIVER=configmap)
labelled owner=helm,name=<release>. The record is decoded here, in memory, and only a
projection leaves this module: chart name/version, app version, status, revision and the
user-supplied values (which the redactor then cleans like any other object). Nothing else of
any Secret is kept: not the rendered manifest, not the chart's files, not the Secret itself.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from typing import Any

RELEASE_SELECTOR = "owner=helm,name={release}"
_GZIP_MAGIC = b"\x1f\x8b"


class ReleaseDecodeError(ValueError):
    pass


def decode_release(payload: str, *, from_secret: bool) -> dict[str, Any]:
    """The release JSON from a storage record's `release` field."""
    try:
        raw = base64.b64decode(payload)
        if from_secret:  # Secret data is base64 of Helm's own base64
            raw = base64.b64decode(raw)
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except (binascii.Error, OSError, ValueError) as exc:
        raise ReleaseDecodeError(f"cannot decode the Helm release record: {exc}") from exc


def latest_record(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The record of the highest revision (Helm's `version` label)."""

    def revision(item: dict[str, Any]) -> int:
        label = ((item.get("metadata") or {}).get("labels") or {}).get("version", "0")
        return int(label) if str(label).isdigit() else 0

    return max(items, key=revision, default=None)


def projection(release: dict[str, Any]) -> dict[str, Any]:
    """What the bundle keeps of a release."""
    chart = (release.get("chart") or {}).get("metadata") or {}
    info = release.get("info") or {}
    return {
        "name": release.get("name"),
        "namespace": release.get("namespace"),
        "revision": release.get("version"),
        "status": info.get("status"),
        "last_deployed": info.get("last_deployed"),
        "chart": {
            "name": chart.get("name"),
            "version": chart.get("version"),
            "appVersion": chart.get("appVersion"),
        },
        # Only what the user set (helm get values), not the chart's defaults.
        "values": release.get("config") or {},
    }


def project_record(record: dict[str, Any], *, from_secret: bool) -> dict[str, Any]:
    payload = (record.get("data") or {}).get("release")
    if not payload:
        raise ReleaseDecodeError("the Helm release record has no release data")
    return projection(decode_release(payload, from_secret=from_secret))
