"""The bundle's manifest: what was asked, which cluster answered, and every artifact.

The writer redacts it, checks it against its schema and puts it first in the archive; the
analyzer reads each artifact's status from it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from k8s.tensorfusion import COMPONENT

from . import __version__
from .locate import Installation
from .store import ObjectStore

if TYPE_CHECKING:  # run.py imports this module
    from .run import CollectOptions


def build_manifest(
    opts: CollectOptions,
    *,
    created: datetime,
    context: str | None,
    elapsed: float,
    artifacts: list[dict[str, Any]],
    server_version: dict[str, Any],
    tf_installed: bool | None,
    installation: Installation,
    warnings: list[str],
    store: ObjectStore,
) -> dict[str, Any]:
    return {
        "format_version": 1,
        "tool": {"name": "tf-collect", "version": __version__},
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_ms": int(elapsed * 1000),
        "options": {
            "namespace": opts.namespace,
            "release": opts.release,
            "context": context,
            "tail_lines": opts.tail,
            "since_seconds": opts.since_seconds,
            "concurrency": opts.concurrency,
            "qps": opts.qps,
            "timeout_seconds": opts.request_timeout,
            "overall_timeout_seconds": opts.overall_timeout,
            "exec": opts.exec,
            "metrics": opts.metrics,
            "pods": list(opts.pods),
            "workload_namespaces": list(opts.workload_namespaces),
            "max_size_bytes": opts.max_size,
        },
        "time_window": {"since_seconds": opts.since_seconds, "tail_lines": opts.tail},
        "cluster": {
            "server_version": server_version.get("gitVersion"),
            "platform": server_version.get("platform"),
            "context": context,
        },
        "tensorfusion": {
            "namespace": installation.namespace,
            "release": installation.release,
            "version": tf_version(store, installation.namespace),
            "installed": tf_installed,
            "found_by": list(installation.found_by),
        },
        "warnings": list(warnings),
        "redaction": {"enabled": True, "counts": {}, "files": {}},  # the writer fills it
        "artifacts": sorted(artifacts, key=lambda a: a["id"]),
    }


def tf_version(store: ObjectStore, namespace: str) -> str | None:
    """The image tag of the operator's controller container, from its Deployment."""
    deployments = store.objects.get(("apps", "deployments", namespace), {})
    for dep in deployments.values():
        labels = dep["metadata"].get("labels") or {}
        if labels.get(COMPONENT) != "operator":
            continue
        for c in dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            image = c.get("image", "")
            if c.get("name") in ("controller", "manager") and ":" in image.rsplit("/", 1)[-1]:
                return image.rsplit(":", 1)[-1]
    return None
