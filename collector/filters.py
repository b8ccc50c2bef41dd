"""What is kept of listed objects: client-side filters and field trimming.

Trimming happens before anything is serialised: `managedFields` is server bookkeeping that
doubles an object's size and says nothing about a fault, and a node's image list can be
thousands of lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from k8s.tensorfusion import CHART, TF_GROUP, TF_PREFIX


def strip(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    if obj.get("kind") == "Node" and isinstance(obj.get("status"), dict):
        obj["status"].pop("images", None)
    return obj


def _tf_crd(obj: dict[str, Any], release: str) -> bool:
    return (obj.get("spec") or {}).get("group") == TF_GROUP


def is_tf_webhook(obj: dict[str, Any]) -> bool:
    """A webhook configuration of TensorFusion's: a webhook named *.tensor-fusion.ai (the
    chart's), or the kustomize install's `tensor-fusion-mutating-webhook-configuration`."""
    name = (obj.get("metadata") or {}).get("name", "")
    hooks = [w.get("name", "") for w in obj.get("webhooks") or []]
    return CHART in name or any(h.endswith(TF_GROUP) for h in hooks)


def _tf_webhook(obj: dict[str, Any], release: str) -> bool:
    name = (obj.get("metadata") or {}).get("name", "")
    return name.startswith(release) or is_tf_webhook(obj)


def _tf_workload(obj: dict[str, Any], release: str) -> bool:
    """A Deployment, StatefulSet or DaemonSet with any tensor-fusion.ai/ key, on itself or its
    template."""
    meta = obj.get("metadata") or {}
    template = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
    return any(
        key.startswith(TF_PREFIX)
        for m in (meta, template)
        for key in (*(m.get("labels") or {}), *(m.get("annotations") or {}))
    )


# Filter name (as plan.ListStep.keep) -> predicate(object, release name).
KEEP: dict[str, Callable[[dict[str, Any], str], bool]] = {
    "tf-crds": _tf_crd,
    "tf-webhooks": _tf_webhook,
    "tf-workloads": _tf_workload,
}
