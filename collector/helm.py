"""The Helm release of TensorFusion, reduced to what diagnosis needs.

Helm 3 keeps each release revision in a Secret (or a ConfigMap with HELM_DRIVER=configmap)
labelled owner=helm,name=<release>; k8s.helm_record decodes it in memory, and only a
projection leaves this module: chart name/version, app version, status, revision and the
user-supplied values (which the redactor then cleans like any other object). Nothing else of
any Secret is kept: not the rendered manifest, not the chart's files, not the Secret itself.
"""

from __future__ import annotations

from typing import Any

from k8s.helm_record import decode_record

RELEASE_SELECTOR = "owner=helm,name={release}"


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
    """What the bundle keeps of a storage record (ReleaseDecodeError if it is unreadable)."""
    return projection(decode_record(record, from_secret=from_secret))
