"""Helm 3's release storage record, both ways.

Helm keeps each revision of a release in a Secret of type helm.sh/release.v1 (or, with
HELM_DRIVER=configmap, a ConfigMap) named sh.helm.release.v1.<release>.v<revision> and labelled
owner=helm, name, status and version. Its `release` field is the release as JSON, gzipped, then
base64; a Secret's data is base64 of that once more.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from typing import Any

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
_GZIP_MAGIC = b"\x1f\x8b"


class ReleaseDecodeError(ValueError):
    """A storage record whose release cannot be read."""


def encode_record(release: dict[str, Any], *, driver: str = "secret") -> dict[str, Any]:
    """The Secret (driver "secret", Helm's default) or ConfigMap that stores `release`."""
    name, revision = release["name"], int(release["version"])
    status = str((release.get("info") or {}).get("status", ""))
    payload = base64.b64encode(gzip.compress(json.dumps(release).encode(), mtime=0)).decode()
    meta = {
        "name": f"sh.helm.release.v1.{name}.v{revision}",
        "namespace": release["namespace"],
        "labels": {"name": name, "owner": "helm", "status": status, "version": str(revision)},
    }
    if driver == "configmap":
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {"release": payload},
        }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "type": RELEASE_SECRET_TYPE,
        "data": {"release": base64.b64encode(payload.encode()).decode()},
    }


def decode_record(record: dict[str, Any], *, from_secret: bool) -> dict[str, Any]:
    """The release a storage record holds (a Secret's when `from_secret`, else a ConfigMap's)."""
    payload = (record.get("data") or {}).get("release")
    if not payload:
        raise ReleaseDecodeError("the Helm release record has no release data")
    try:
        raw = base64.b64decode(payload)
        if from_secret:
            raw = base64.b64decode(raw)
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except (binascii.Error, OSError, ValueError) as exc:
        raise ReleaseDecodeError(f"cannot decode the Helm release record: {exc}") from exc


def latest_record(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The record of the highest revision (the `version` label)."""

    def revision(item: dict[str, Any]) -> int:
        label = ((item.get("metadata") or {}).get("labels") or {}).get("version", "0")
        return int(label) if str(label).isdigit() else 0

    return max(items, key=revision, default=None)
