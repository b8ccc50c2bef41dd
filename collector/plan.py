"""The collection plan, as data.

Every command the troubleshooting manual asks a user to run maps to one step here, tagged
with the manual section it appears in (``baseline`` or a section key of
``docs/manual/rows.yaml``). The runner interprets the steps; ``tf-collect --dry-run`` prints
them per section, each manual command with the step that covers it. Each kind of step names
the data sources (tf_support_schemas.sources) it gathers, the names rules read them by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from k8s.tensorfusion import (
    COMPONENT,
    CONNECTIONS,
    GPU_NODES,
    GPU_POOLS,
    GPUS,
    QUOTAS,
    TF_CLUSTERS,
    WORKLOADS,
)
from k8s.types import ResourceType, builtin
from tf_support_schemas.manual import load_manual

TF_NAMESPACE = "{tf}"  # placeholder: the TensorFusion namespace given by -n/--namespace
ALL_NAMESPACES = "*"
WORKLOAD_NAMESPACES = "{workloads}"  # namespaces where TF workloads were found
DEFAULT_NAMESPACE = "default"  # where events of cluster-scoped objects are recorded

PODS = builtin("pods")
EVENTS = builtin("events")
NODES = builtin("nodes")
CONFIGMAPS = builtin("configmaps")
DEPLOYMENTS = builtin("deployments", "apps")
REPLICASETS = builtin("replicasets", "apps")
STATEFULSETS = builtin("statefulsets", "apps")
DAEMONSETS = builtin("daemonsets", "apps")
JOBS = builtin("jobs", "batch")
CRDS = builtin("customresourcedefinitions", "apiextensions.k8s.io")
WEBHOOKS = builtin("mutatingwebhookconfigurations", "admissionregistration.k8s.io")

# (manual section, the command exactly as the manual prints it)
Manual = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ListStep:
    """List objects of one or more resources, once per label and field selector."""

    id: str
    manual: Manual
    resources: tuple[ResourceType, ...]
    namespace: str | None = None  # TF_NAMESPACE, ALL_NAMESPACES, WORKLOAD_NAMESPACES, a name
    label_selectors: tuple[str | None, ...] = (None,)
    field_selectors: tuple[str | None, ...] = (None,)
    keep: str | None = None  # a client-side filter of collector.filters, by name

    @property
    def sources(self) -> tuple[str, ...]:
        # Events are objects too; rules also read them by the object they name.
        return ("objects", "events_for") if EVENTS in self.resources else ("objects",)


@dataclass(frozen=True)
class LogStep:
    """Container logs of TF component pods (found by label, never by name), or of the pods
    a named selection of collector.targets picks (`select`: workloads, nvidia-stack).

    `attention_only`: only pods that are unhealthy or restarted, and remote workers (local
    business pods carry component=worker too, and there may be thousands of them).
    Previous logs are read for containers that restarted: a crash's reason is in the log of
    the run that died. `tail` overrides --tail when smaller; `max_pods` bounds the pods read,
    those that need attention first.
    """

    sources: ClassVar[tuple[str, ...]] = ("logs",)
    id: str
    manual: Manual
    components: tuple[str, ...] = ()
    namespace: str = TF_NAMESPACE
    init_containers: bool = False
    attention_only: bool = False
    select: str | None = None
    tail: int | None = None
    max_pods: int | None = None


@dataclass(frozen=True)
class GrepLogStep:
    """Lines of a component's whole current log that contain a fixed string."""

    sources: ClassVar[tuple[str, ...]] = ("logs",)
    id: str
    manual: Manual
    component: str
    containers: tuple[str, ...]
    pattern: str
    max_lines: int = 500


@dataclass(frozen=True)
class HeadLogStep:
    """The first lines each TF component container logged since it started, where it prints
    its version (`version: 1.48.6, hash: ..., time: ...`): the report says what runs from it.
    One pod per distinct image of each component, so a thousand hypervisors cost a few reads."""

    sources: ClassVar[tuple[str, ...]] = ("logs",)
    id: str
    manual: Manual
    components: tuple[str, ...]
    lines: int = 50


@dataclass(frozen=True)
class DescribeStep:
    """What `kubectl describe pod` adds for unhealthy pods: their events, and the logs of
    the init containers of pods stuck in Init."""

    sources: ClassVar[tuple[str, ...]] = ("events_for", "logs")
    id: str
    manual: Manual


@dataclass(frozen=True)
class HelmStep:
    """The release's chart version and user-supplied values, in a redacted projection."""

    sources: ClassVar[tuple[str, ...]] = ("helm",)
    id: str
    manual: Manual


@dataclass(frozen=True)
class ExecStep:
    """Read-only, time-boxed commands inside containers (opt-in with --exec)."""

    sources: ClassVar[tuple[str, ...]] = ("exec",)
    id: str
    manual: Manual
    target: str  # "workloads" (TF workload containers) or "nodes" (each hypervisor pod)


@dataclass(frozen=True)
class MetricsStep:
    """Allocation failures from GreptimeDB's tf_system_metrics (opt-in with --metrics)."""

    sources: ClassVar[tuple[str, ...]] = ("metrics",)
    id: str
    manual: Manual


Step = (
    ListStep
    | LogStep
    | GrepLogStep
    | HeadLogStep
    | DescribeStep
    | HelmStep
    | ExecStep
    | MetricsStep
)

_DESCRIBE = "kubectl describe pod <pod> -n <namespace>"
_CTRL_LOGS = "kubectl logs -n tensor-fusion-sys deploy/tensor-fusion-sys-controller -c controller"

PLAN: tuple[Step, ...] = (
    # ------------------------------------------------------------------ baseline
    ListStep(
        id="baseline/tf-resources",
        manual=(
            ("baseline", "kubectl get tensorfusioncluster,gpupool,gpunode,gpu"),
            ("gpu-discovery", "kubectl get gpunode"),
            (
                "gpu-discovery",
                "kubectl get gpu -o custom-columns='NAME:.metadata.name,"
                "MODEL:.status.gpuModel,PHASE:.status.phase,USED_BY:.status.usedBy,"
                "CAPACITY:.status.capacity'",
            ),
            (
                "gpu-discovery",
                "kubectl get gpupool <pool> -o jsonpath='{.spec.nodeManagerConfig.nodeSelector}'",
            ),
            (
                "pod-pending",
                "kubectl get gpu -o custom-columns='NAME:.metadata.name,"
                "MODEL:.status.gpuModel,PHASE:.status.phase,USED_BY:.status.usedBy,"
                "MODE:.status.isolationMode,ACTIVE_MODE:.status.activeIsolationMode,"
                "AVAILABLE:.status.available'",
            ),
        ),
        resources=(TF_CLUSTERS, GPU_POOLS, GPU_NODES, GPUS),
    ),
    ListStep(
        id="baseline/tf-pods",
        manual=(
            ("baseline", "kubectl get pods -n tensor-fusion-sys -o wide"),
            (
                "controller-crash",
                "kubectl get pods -n tensor-fusion-sys -l tensor-fusion.ai/component=operator",
            ),
            (
                "gpu-discovery",
                "kubectl get pods -n tensor-fusion-sys -l "
                "tensor-fusion.ai/component=hypervisor -o wide",
            ),
        ),
        resources=(PODS,),
        namespace=TF_NAMESPACE,
    ),
    ListStep(
        id="baseline/all-pods",
        manual=(
            ("image-pull", "kubectl get pods -A | grep -E 'ImagePullBackOff|ErrImagePull'"),
            ("webhook-not-injecting", "kubectl get pod <pod> -n <namespace> --show-labels"),
            (
                "webhook-not-injecting",
                "kubectl get pod <pod> -n <namespace> -o jsonpath='"
                '{.spec.schedulerName}{"\\n"}{.spec.initContainers[*].name}{"\\n"}\'',
            ),
            ("pod-pending", "kubectl get pods -n <namespace> -l tensor-fusion.ai/component=worker"),
            (
                "limits-not-enforced",
                "kubectl get pod <worker-pod> -n <namespace> -o yaml | grep "
                "-A1 -E 'TF_CUDA_SM_PERCENT_LIMIT|TF_GPU_MEMORY_LIMIT'",
            ),
            (
                "cuda-oom",
                "kubectl get pod <pod> -n <namespace> -o jsonpath='{.metadata.annotations}'",
            ),
        ),
        resources=(PODS,),
        namespace=ALL_NAMESPACES,
    ),
    ListStep(
        id="baseline/tf-events",
        manual=(
            ("baseline", _DESCRIBE),
            (
                "controller-crash",
                "kubectl describe pod -n tensor-fusion-sys -l tensor-fusion.ai/component=operator",
            ),
            ("hypervisor-not-ready", "kubectl describe pod -n tensor-fusion-sys hypervisor-<node>"),
        ),
        resources=(EVENTS,),
        namespace=TF_NAMESPACE,
    ),
    LogStep(
        id="baseline/controller-logs",
        manual=(
            ("baseline", f"{_CTRL_LOGS} --tail=200"),
            ("controller-crash", f"{_CTRL_LOGS} --previous"),
        ),
        components=("operator",),
    ),
    LogStep(
        id="baseline/hypervisor-logs",
        manual=(
            (
                "baseline",
                "kubectl logs -n tensor-fusion-sys hypervisor-<node> --all-containers --tail=200",
            ),
            (
                "hypervisor-not-ready",
                "kubectl logs -n tensor-fusion-sys hypervisor-<node> --all-containers --tail=200",
            ),
            (
                "hypervisor-not-ready",
                "kubectl logs -n tensor-fusion-sys hypervisor-<node> --all-containers --previous",
            ),
        ),
        components=("hypervisor",),
        init_containers=True,
    ),
    DescribeStep(
        id="baseline/describe-unhealthy",
        manual=(
            ("baseline", _DESCRIBE),
            ("pod-pending", "kubectl describe pod <pending-pod> -n <namespace>"),
            ("pod-init", _DESCRIBE),
            ("pod-init", "kubectl logs <pod> -n <namespace> -c <init-container>"),
            ("cuda-oom", _DESCRIBE),
            ("image-pull", _DESCRIBE),
        ),
    ),
    # ------------------------------------------------------------------ controller-crash
    ListStep(
        id="controller-crash/workloads",
        manual=(("controller-crash", f"{_CTRL_LOGS} --previous"),),
        resources=(DEPLOYMENTS,),
        namespace=TF_NAMESPACE,
    ),
    ListStep(
        id="controller-crash/config",
        manual=(),
        resources=(CONFIGMAPS,),
        namespace=TF_NAMESPACE,
    ),
    HelmStep(id="controller-crash/helm-release", manual=()),
    ListStep(id="controller-crash/crds", manual=(), resources=(CRDS,), keep="tf-crds"),
    # ------------------------------------------------------------------ gpu-discovery
    ListStep(
        id="gpu-discovery/nodes",
        manual=(("gpu-discovery", "kubectl get nodes -l nvidia.com/gpu.present=true"),),
        resources=(NODES,),
    ),
    # ------------------------------------------------------------------ hypervisor-not-ready
    ListStep(
        id="hypervisor-not-ready/cluster-events",
        manual=(("hypervisor-not-ready", "kubectl describe gpunode <node>"),),
        resources=(EVENTS,),
        namespace=DEFAULT_NAMESPACE,
        field_selectors=tuple(
            f"involvedObject.kind={kind}"
            for kind in ("GPUNode", "GPUPool", "TensorFusionCluster", "GPU", "Node")
        ),
    ),
    # ------------------------------------------------------------------ webhook-not-injecting
    HeadLogStep(id="baseline/start-lines", manual=(), components=("operator", "hypervisor")),
    GrepLogStep(
        id="webhook-not-injecting/mutating-pod",
        manual=(("webhook-not-injecting", f'{_CTRL_LOGS} | grep "Mutating pod"'),),
        component="operator",
        containers=("controller", "manager"),
        pattern="Mutating pod",
    ),
    ListStep(
        id="webhook-not-injecting/webhooks",
        manual=(
            (
                "webhook-not-injecting",
                "kubectl get mutatingwebhookconfiguration tensor-fusion-sys-mutating-webhook",
            ),
        ),
        resources=(WEBHOOKS,),
        keep="tf-webhooks",
    ),
    # Workloads whose TF keys sit on their own metadata only (the manual's classic mistake)
    # have pods with no TF key, so no pod leads to their namespace: find them directly.
    ListStep(
        id="webhook-not-injecting/tf-workloads",
        manual=(),
        resources=(DEPLOYMENTS, STATEFULSETS, DAEMONSETS),
        namespace=ALL_NAMESPACES,
        keep="tf-workloads",
    ),
    ListStep(
        id="webhook-not-injecting/owners",
        manual=(
            ("webhook-rejects", "kubectl describe replicaset -n <namespace> -l <your-pod-label>"),
        ),
        # What made each pod, and the template it follows now: a pod that lacks what its
        # owner's template has predates it (pod-template-hash, controller-revision-hash).
        resources=(DEPLOYMENTS, STATEFULSETS, DAEMONSETS, REPLICASETS, JOBS),
        namespace=WORKLOAD_NAMESPACES,
    ),
    # ------------------------------------------------------------------ webhook-rejects
    ListStep(
        id="webhook-rejects/failed-create",
        manual=(
            ("webhook-rejects", "kubectl describe replicaset -n <namespace> -l <your-pod-label>"),
        ),
        resources=(EVENTS,),
        namespace=ALL_NAMESPACES,
        field_selectors=("reason=FailedCreate",),
    ),
    # ------------------------------------------------------------------ pod-pending
    ListStep(
        id="pod-pending/tf-workloads",
        manual=(
            (
                "pod-pending",
                "kubectl get tensorfusionworkload,tensorfusionconnection -n <namespace>",
            ),
            ("pod-pending", "kubectl get gpuresourcequota -n <namespace>"),
            ("remote-gpu", "kubectl get tensorfusionconnection -n <namespace>"),
        ),
        resources=(WORKLOADS, CONNECTIONS, QUOTAS),
        namespace=ALL_NAMESPACES,
    ),
    # The controller records Events on the namespaced resources too (a workload that cannot
    # get its workers, a connection without a worker, a quota exceeded).
    ListStep(
        id="pod-pending/tf-object-events",
        manual=(),
        resources=(EVENTS,),
        namespace=ALL_NAMESPACES,
        field_selectors=tuple(
            f"involvedObject.kind={kind}"
            for kind in ("TensorFusionWorkload", "TensorFusionConnection", "GPUResourceQuota")
        ),
    ),
    MetricsStep(id="pod-pending/allocation-failures", manual=()),
    # ------------------------------------------------------------------ remote-gpu
    LogStep(
        id="remote-gpu/worker-logs",
        manual=(("remote-gpu", "kubectl logs <worker-pod> -n <namespace> --tail=200"),),
        components=("worker", "client"),
        namespace=ALL_NAMESPACES,
        attention_only=True,
    ),
    # A workload that logged a CUDA, NCCL or out-of-memory error and kept running is healthy
    # to Kubernetes: only its log shows the fault, and its newest lines are enough.
    LogStep(
        id="cuda-oom/workload-logs",
        manual=(),
        namespace=ALL_NAMESPACES,
        select="workloads",
        tail=50,
        max_pods=50,
    ),
    # What NVIDIA's stack printed on the GPU nodes: driver, toolkit, validator, device plugin.
    LogStep(
        id="cuda-libs/nvidia-stack-logs",
        manual=(),
        namespace=ALL_NAMESPACES,
        init_containers=True,
        select="nvidia-stack",
        tail=100,
        max_pods=50,
    ),
    # ------------------------------------------------------------------ in-container checks
    ExecStep(
        id="limits-not-enforced/container-checks",
        manual=(
            (  # the manual's multi-line block, its lines joined by single spaces
                "limits-not-enforced",
                "kubectl exec <pod> -n <namespace> -c <container> -- sh -c ' "
                'cat /etc/ld.so.preload env | grep -E "^TF_(ISOLATION_MODE|SHM_PATH)=" '
                'ls -l "$TF_SHM_PATH" nvidia-smi\'',
            ),
            ("cuda-oom", "kubectl exec <pod> -n <namespace> -c <container> -- nvidia-smi"),
            ("cuda-libs", "nvidia-smi"),
            ("cuda-libs", "ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'"),
            ("cuda-libs", "cat /etc/ld.so.preload"),
        ),
        target="workloads",
    ),
    ExecStep(
        id="cuda-libs/node-checks",
        manual=(
            ("cuda-libs", "nvidia-smi"),
            ("cuda-libs", "ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'"),
            ("cuda-libs", "lsmod | grep nvidia"),
            ("gpu-discovery", "nvidia-smi"),
        ),
        target="nodes",
    ),
)


def default_plan(*, with_exec: bool = False, with_metrics: bool = False) -> tuple[Step, ...]:
    return tuple(
        s
        for s in PLAN
        if (with_exec or not isinstance(s, ExecStep))
        and (with_metrics or not isinstance(s, MetricsStep))
    )


def scope_of_id(step_id: str) -> str:
    """The scope of a step id: "baseline" or a manual section key."""
    return step_id.split("/", 1)[0]


def coverage(plan: tuple[Step, ...] = PLAN) -> dict[str, list[tuple[str, str]]]:
    """Manual section -> [(manual command, id of the step covering it)], in manual order."""
    found: dict[str, list[tuple[str, str]]] = {}
    for step in plan:
        for section, command in step.manual:
            found.setdefault(section, []).append((command, step.id))
    manual = load_manual()
    return {k: found[k] for k in sorted(found, key=manual.section_order)}


def step_summary(step: Step, namespace: str) -> str:
    """One line saying what a step collects, for --dry-run."""
    where = {
        None: "cluster-wide",
        TF_NAMESPACE: f"in {namespace}",
        ALL_NAMESPACES: "in all namespaces",
        WORKLOAD_NAMESPACES: "in the namespaces of TF workloads",
    }
    if isinstance(step, ListStep):
        at = where.get(step.namespace, f"in {step.namespace}")
        sel = [s for s in step.label_selectors + step.field_selectors if s]
        extra = f" ({' / '.join(sel)})" if sel else ""
        keep = f", keeping {step.keep}" if step.keep else ""
        return f"list {', '.join(r.display for r in step.resources)} {at}{extra}{keep}"
    if isinstance(step, LogStep):
        init = " incl. init containers" if step.init_containers else ""
        who = " that need attention" if step.attention_only else ""
        pods = {
            "workloads": "TF and GPU workload pods",
            "nvidia-stack": "NVIDIA GPU stack pods (driver, toolkit, validator, device plugin)",
        }.get(step.select or "", f"{COMPONENT}={'|'.join(step.components)} pods")
        most = (
            f", every pod whose container failed and restarted, then up to {step.max_pods} pods"
            " in all, those needing attention first"
            if step.max_pods
            else ""
        )
        tail = f"newest {step.tail} lines" if step.tail else "tail"
        return (
            f"logs of every container{init} of {pods}{who} {where.get(step.namespace, '')} "
            f"({tail}, and --previous where restarted{most})"
        )
    if isinstance(step, GrepLogStep):
        return f'lines containing "{step.pattern}" in the whole {step.component} log'
    if isinstance(step, HeadLogStep):
        return (
            f"first {step.lines} lines since start of {'|'.join(step.components)} containers"
            " (their version line; image tags and IDs come with the pods), one pod per image"
        )
    if isinstance(step, DescribeStep):
        return "events of every unhealthy pod found; init-container logs of pods stuck in Init"
    if isinstance(step, HelmStep):
        return "Helm release: chart version and user-supplied values (redacted projection)"
    if isinstance(step, ExecStep):
        return (
            f"read-only checks in {'TF workload containers' if step.target == 'workloads' else 'each hypervisor pod (GPU node)'}"
            " (--exec)"
        )
    return "allocation failures per pool from GreptimeDB tf_system_metrics (--metrics)"
