"""TensorFusion's names, as its chart and controller spell them: the API group of its CRDs, the
label and annotation keys the collector, the analyzer and the reports look for, the chart's
defaults, and the resource types its CRDs serve. Rule files in rules/ keep their own literal
strings: they are data, read by people."""

from __future__ import annotations

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
