"""What a finding is about, and what it depends on, beyond the one object it names.

A finding names one object (`Pod/ml-team/trainer-0`, `GPU/gpu-1f2e...`, `GPUNode/node-a`). A
cause elsewhere explains it when it is about something that finding depends on: the node and
the GPUs a workload pod runs on (a hypervisor down there, a card overcommitted), or the
TensorFusion component its rule says it needs (the controller serves the webhook and runs the
scheduler). Both sides are sets of refs, compared by intersection:

- `about`: the finding's objects, and what they stand for: a GPUNode and a hypervisor pod are
  their node's GPU stack (`Node/<node>`), the operator's pod or Deployment and every finding of
  the controller-crash section are the controller (`Component/operator`).
- `reach`: `about`, plus for a GPU or TensorFusion workload pod its node and GPUs (the
  scheduler's `tensor-fusion.ai/gpu-ids`), plus the components the rule `depends_on`.

A pod that uses no GPU (the controller itself) does not depend on its node's GPU stack.
"""

from __future__ import annotations

from typing import Any

from k8s.tensorfusion import COMPONENT, GPU_IDS, gpu_workload

from ..bundle import Bundle
from ..results import Finding
from .functions import annotation, label

OPERATOR = "Component/operator"
CONTROLLER_SECTION = "controller-crash"


def place(bundle: Bundle, finding: Finding, depends_on: tuple[str, ...] = ()) -> None:
    """Set the finding's `about` and `reach` from the bundle's objects."""
    about: set[str] = set()
    reach: set[str] = set()
    for ref in finding.objects:
        about.add(ref)
        kind, namespace, name = _parts(ref)
        if kind == "GPUNode":
            about.add(f"Node/{name}")
        elif kind == "Pod":
            pod = _object(bundle, "pods", "", namespace, name)
            about |= _pod_stands_for(pod)
            reach |= _pod_runs_on(pod)
        elif kind in ("Deployment", "ReplicaSet"):
            owner = _object(bundle, kind.lower() + "s", "apps", namespace, name)
            template = ((owner or {}).get("spec") or {}).get("template")
            if "operator" in (label(owner, COMPONENT), label(template, COMPONENT)):
                about.add(OPERATOR)
    if finding.section == CONTROLLER_SECTION:
        about.add(OPERATOR)
    reach |= about
    reach |= {f"Component/{c}" for c in depends_on}
    finding.about = frozenset(about)
    finding.reach = frozenset(reach)


def _pod_stands_for(pod: dict[str, Any] | None) -> set[str]:
    component = label(pod, COMPONENT)
    if component == "operator":
        return {OPERATOR}
    node = _node(pod)
    if component == "hypervisor" and node:
        return {f"Node/{node}"}
    return set()


def _pod_runs_on(pod: dict[str, Any] | None) -> set[str]:
    """The node and GPUs of a pod that uses GPUs through TensorFusion or natively (the
    finding's own namespace decides nothing here: a TensorFusion worker is a workload)."""
    if pod is None or not gpu_workload(pod, ""):
        return set()
    found = {f"Node/{_node(pod)}"} if _node(pod) else set()
    gpus = annotation(pod, GPU_IDS)
    found |= {f"GPU/{g.strip()}" for g in gpus.split(",") if g.strip()}
    return found


def _parts(ref: str) -> tuple[str, str, str]:
    kind, _, rest = ref.partition("/")
    namespace, _, name = rest.rpartition("/")
    return kind, namespace, name


def _object(
    bundle: Bundle, resource: str, group: str, namespace: str, name: str
) -> dict[str, Any] | None:
    found = bundle.objects(
        resource, group=group, namespace=namespace, fields=f"metadata.name={name}"
    )
    return found[0] if found else None


def _node(pod: dict[str, Any] | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")
