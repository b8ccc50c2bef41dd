"""TensorFusion's names, as its chart and controller spell them: the API group of its CRDs, the
label and annotation keys the collector, the analyzer and the reports look for, the chart's
defaults, the resource types its CRDs serve, and which pods are TensorFusion or GPU workloads
(the collector picks their logs by it; rules judge the same pods). Rule files in rules/ keep their own literal
strings: they are data, read by people."""

from __future__ import annotations

from typing import Any

from .types import ResourceType

TF_GROUP = "tensor-fusion.ai"
TF_PREFIX = f"{TF_GROUP}/"  # of every TensorFusion label and annotation key
COMPONENT = f"{TF_GROUP}/component"  # operator | hypervisor | worker | client
GPU_IDS = f"{TF_GROUP}/gpu-ids"  # the GPUs the scheduler gave a pod
IS_LOCAL_GPU = f"{TF_GROUP}/is-local-gpu"  # "true" on a worker that runs beside its client
INJECT_CONTAINER = f"{TF_GROUP}/inject-container"  # the containers the webhook injects into

# The chart's defaults; users may install under any namespace and release name.
CHART = "tensor-fusion"
CHART_NAMESPACE = "tensor-fusion-sys"

TF_CLUSTERS = ResourceType(TF_GROUP, "v1", "tensorfusionclusters", "TensorFusionCluster", False)
GPU_POOLS = ResourceType(TF_GROUP, "v1", "gpupools", "GPUPool", False)
GPU_NODES = ResourceType(TF_GROUP, "v1", "gpunodes", "GPUNode", False)
GPUS = ResourceType(TF_GROUP, "v1", "gpus", "GPU", False)
WORKLOADS = ResourceType(TF_GROUP, "v1", "tensorfusionworkloads", "TensorFusionWorkload", True)
CONNECTIONS = ResourceType(
    TF_GROUP, "v1", "tensorfusionconnections", "TensorFusionConnection", True
)
QUOTAS = ResourceType(TF_GROUP, "v1", "gpuresourcequotas", "GPUResourceQuota", True)


NATIVE_GPU = "nvidia.com/gpu"  # NVIDIA's device plugin; MIG slices are nvidia.com/mig-<profile>


def requests_native_gpu(container: Any) -> bool:
    """Whether a container asks for whole GPUs through NVIDIA's device plugin: nvidia.com/gpu
    or a MIG slice (nvidia.com/mig-*) in its requests or limits."""
    resources = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(resources, dict):
        return False
    return any(
        key == NATIVE_GPU or str(key).startswith("nvidia.com/mig-")
        for part in ("limits", "requests")
        if isinstance(resources.get(part), dict)
        for key in resources[part]
    )


def tf_related(pod: Any) -> bool:
    """A tensor-fusion.ai/ label or annotation, or a container (init ones too) asking for
    NVIDIA GPUs."""
    if not isinstance(pod, dict):
        return False
    meta = pod.get("metadata") or {}
    keys = [*(meta.get("labels") or {}), *(meta.get("annotations") or {})]
    if any(isinstance(k, str) and k.startswith(TF_PREFIX) for k in keys):
        return True
    spec = pod.get("spec") or {}
    return any(
        requests_native_gpu(c)
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    )


def gpu_workload(pod: Any, tf_namespace: str) -> bool:
    """A pod that uses GPUs through TensorFusion or natively, not one of TensorFusion's own:
    outside its namespace, neither its operator nor a hypervisor."""
    if not isinstance(pod, dict):
        return False
    meta = pod.get("metadata") or {}
    if meta.get("namespace") == tf_namespace:
        return False
    if (meta.get("labels") or {}).get(COMPONENT) in ("operator", "hypervisor"):
        return False
    return tf_related(pod)
