"""Which pods need the per-symptom checks, found from the baseline without being told.

TF components are found by the `tensor-fusion.ai/component` label, never by name (names
differ across TensorFusion versions: a hypervisor pod may be `tf-hypervisor-<node>`).
Workloads are k8s.tensorfusion.gpu_workload: any `tensor-fusion.ai/` label or annotation, or
a request for `nvidia.com/gpu` (the rules judge the same pods).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from k8s.tensorfusion import COMPONENT, IS_LOCAL_GPU, gpu_workload, tf_related

from .health import unhealthy_reason


@dataclass(frozen=True)
class PodRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def ref(pod: dict[str, Any]) -> PodRef:
    meta = pod.get("metadata") or {}
    return PodRef(meta.get("namespace", ""), meta.get("name", ""))


def component(pod: dict[str, Any]) -> str | None:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(COMPONENT)


# Images of NVIDIA's GPU stack: the GPU Operator and its operands (driver, container toolkit,
# validator, MIG manager, DCGM exporter), the device plugin and GPU feature discovery, as
# nvcr.io and the managed platforms (GKE's nvidia-gpu-device-plugin, driver installers) name them.
_NVIDIA_STACK = re.compile(
    r"nvidia.*(device-plugin|gpu-operator|container-toolkit|validator|feature-discovery|dcgm"
    r"|driver|mig-manager)"
)


def runs_nvidia_stack(pod: dict[str, Any]) -> bool:
    return any(_NVIDIA_STACK.search(c.get("image") or "") for c in _containers(pod))


# Pod selections a log step may name (plan.LogStep.select): predicate(pod, TF namespace).
SELECTIONS: dict[str, Callable[[dict[str, Any], str], bool]] = {
    "workloads": gpu_workload,
    "nvidia-stack": lambda pod, _ns: runs_nvidia_stack(pod),
}


def needs_attention(pod: dict[str, Any]) -> bool:
    """Unhealthy or restarted pods, and remote workers (their logs explain client errors)."""
    if unhealthy_reason(pod):
        return True
    status = pod.get("status") or {}
    if any(cs.get("restartCount", 0) > 0 for cs in status.get("containerStatuses") or []):
        return True
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return component(pod) == "worker" and annotations.get(IS_LOCAL_GPU) != "true"


def failed_and_restarted(pod: dict[str, Any]) -> bool:
    """A container of the pod failed (non-zero exit) and was started again: the log of the run
    that died says why, even when the pod runs again now."""
    status = pod.get("status") or {}
    return any(
        cs.get("restartCount", 0) > 0
        and ((cs.get("lastState") or {}).get("terminated") or {}).get("exitCode", 0) != 0
        for cs in status.get("containerStatuses") or []
    )


def stuck_in_init(pod: dict[str, Any]) -> list[str]:
    """Init containers of a pod that has not finished initialising (they hold the reason)."""
    status = pod.get("status") or {}
    if status.get("phase") != "Pending":
        return []
    stuck = []
    for cs in status.get("initContainerStatuses") or []:
        state = cs.get("state") or {}
        done = (state.get("terminated") or {}).get("exitCode") == 0
        if not done:
            stuck.append(cs.get("name", ""))
    return stuck


# CRI-O's kubelets say RegistryUnavailable and SignatureValidationFailed where containerd's
# say ErrImagePull.
IMAGE_PULL_REASONS = (
    "ImagePullBackOff",
    "ErrImagePull",
    "RegistryUnavailable",
    "SignatureValidationFailed",
)


def image_pull_failing(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
        if reason in IMAGE_PULL_REASONS:
            return True
    return False


def parse_refs(specs: Iterable[str]) -> list[PodRef]:
    """Pods given as "namespace/name" (--pod)."""
    refs = []
    for spec in specs:
        ns, _, name = spec.partition("/")
        refs.append(PodRef(ns, name))
    return refs


@dataclass(frozen=True)
class Targets:
    """The pods a collection run looks at closer, each for its reason."""

    tf_pods: tuple[PodRef, ...]  # TF-related pods in any namespace
    unhealthy: tuple[PodRef, ...]  # of those, plus every image-pull failure in the cluster
    init_stuck: dict[PodRef, tuple[str, ...]]  # pod -> init containers to read logs of
    workload_namespaces: tuple[str, ...]  # namespaces holding TF workloads


def find_targets(
    pods: Iterable[dict[str, Any]], tf_namespace: str, extra: Iterable[PodRef] = ()
) -> Targets:
    extra_set = set(extra)
    tf_pods, unhealthy, namespaces = [], [], set()
    init: dict[PodRef, tuple[str, ...]] = {}
    for pod in sorted(pods, key=lambda p: (ref(p).namespace, ref(p).name)):
        r = ref(pod)
        related = r in extra_set or r.namespace == tf_namespace or tf_related(pod)
        if related:
            tf_pods.append(r)
            if r.namespace != tf_namespace:
                namespaces.add(r.namespace)
        if (related and unhealthy_reason(pod)) or image_pull_failing(pod):
            unhealthy.append(r)
            stuck = stuck_in_init(pod)
            if stuck:
                init[r] = tuple(stuck)
    return Targets(tuple(tf_pods), tuple(unhealthy), init, tuple(sorted(namespaces)))


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    return list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
