"""The collection plan, as data.

Every command the troubleshooting manual asks a user to run maps to one step here, with its
scope (``baseline`` or a manual section key from ``docs/manual/rows.yaml``). The runner
interprets the steps; ``tf-collect --dry-run`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

TF_GROUP = "tensor-fusion.ai"
TF_NAMESPACE = "{tf}"  # placeholder: the TensorFusion namespace given by -n/--namespace
ALL_NAMESPACES = "*"


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool

    def path(self, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.resource}"
        return f"{base}/{self.resource}"

    @property
    def display(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


PODS = Resource("", "v1", "pods", "Pod", True)
EVENTS = Resource("", "v1", "events", "Event", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
TF_CLUSTERS = Resource(TF_GROUP, "v1", "tensorfusionclusters", "TensorFusionCluster", False)
GPU_POOLS = Resource(TF_GROUP, "v1", "gpupools", "GPUPool", False)
GPU_NODES = Resource(TF_GROUP, "v1", "gpunodes", "GPUNode", False)
GPUS = Resource(TF_GROUP, "v1", "gpus", "GPU", False)


@dataclass(frozen=True)
class ListStep:
    """List objects of one or more resources, once per label selector."""

    id: str
    scope: str
    manual: tuple[str, ...]
    resources: tuple[Resource, ...]
    namespace: str | None = None  # TF_NAMESPACE, ALL_NAMESPACES, a name; None: cluster scope
    label_selectors: tuple[str | None, ...] = (None,)


@dataclass(frozen=True)
class LogStep:
    """Logs of every container of the pods in a TF component (found by label, never name).

    Previous logs are fetched for containers that have restarted: a crash-looping pod's
    reason is in the log of the run that died.
    """

    id: str
    scope: str
    manual: tuple[str, ...]
    component: str  # value of the tensor-fusion.ai/component label
    init_containers: bool = False


@dataclass(frozen=True)
class DescribeStep:
    """What `kubectl describe pod` shows for unhealthy pods: the object and its events."""

    id: str
    scope: str
    manual: tuple[str, ...]


Step = ListStep | LogStep | DescribeStep

BASELINE: tuple[Step, ...] = (
    ListStep(
        id="baseline/tf-resources",
        scope="baseline",
        manual=("kubectl get tensorfusioncluster,gpupool,gpunode,gpu",),
        resources=(TF_CLUSTERS, GPU_POOLS, GPU_NODES, GPUS),
    ),
    ListStep(
        id="baseline/tf-pods",
        scope="baseline",
        manual=("kubectl get pods -n tensor-fusion-sys -o wide",),
        resources=(PODS,),
        namespace=TF_NAMESPACE,
    ),
    ListStep(
        id="baseline/workload-pods",
        scope="baseline",
        manual=("kubectl describe pod <pod> -n <namespace>",),
        resources=(PODS,),
        namespace=ALL_NAMESPACES,
        # TF components and workloads carry these labels wherever they run.
        label_selectors=("tensor-fusion.ai/component", "tensor-fusion.ai/enabled"),
    ),
    ListStep(
        id="baseline/tf-deployments",
        scope="baseline",
        manual=(
            "kubectl logs -n tensor-fusion-sys deploy/tensor-fusion-sys-controller "
            "-c controller --tail=200",
        ),
        resources=(DEPLOYMENTS,),
        namespace=TF_NAMESPACE,
    ),
    ListStep(
        id="baseline/tf-events",
        scope="baseline",
        manual=("kubectl describe pod <pod> -n <namespace>",),
        resources=(EVENTS,),
        namespace=TF_NAMESPACE,
    ),
    LogStep(
        id="baseline/controller-logs",
        scope="baseline",
        manual=(
            "kubectl logs -n tensor-fusion-sys deploy/tensor-fusion-sys-controller "
            "-c controller --tail=200",
        ),
        component="operator",
    ),
    LogStep(
        id="baseline/hypervisor-logs",
        scope="baseline",
        manual=("kubectl logs -n tensor-fusion-sys hypervisor-<node> --all-containers --tail=200",),
        component="hypervisor",
        init_containers=True,
    ),
    DescribeStep(
        id="baseline/describe-unhealthy",
        scope="baseline",
        manual=("kubectl describe pod <pod> -n <namespace>",),
    ),
)


def default_plan() -> tuple[Step, ...]:
    return BASELINE


def describe(step: Step, namespace: str) -> str:
    """One line saying what a step collects, for --dry-run."""
    if isinstance(step, ListStep):
        where = {
            None: "cluster-wide",
            TF_NAMESPACE: f"in {namespace}",
            ALL_NAMESPACES: "in all namespaces",
        }.get(step.namespace, f"in {step.namespace}")
        sel = [s for s in step.label_selectors if s]
        extra = f" with labels {' / '.join(sel)}" if sel else ""
        names = ", ".join(r.display for r in step.resources)
        return f"list {names} {where}{extra}"
    if isinstance(step, LogStep):
        init = " incl. init containers" if step.init_containers else ""
        return (
            f"logs of every container{init} of tensor-fusion.ai/component={step.component} "
            f"pods in {namespace} (tail, and --previous where restarted)"
        )
    return "events of every unhealthy pod found (describe data)"
