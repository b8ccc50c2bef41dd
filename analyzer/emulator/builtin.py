"""The built-in Kubernetes resource types the emulator serves, as discovery describes them.

Kinds, scopes, singular names, short names and categories are those of a real v1.30 API server,
so kubectl resolves `po`, `deploy`, `ev`, `crd`, `get all` ... exactly as against a real cluster.
Verbs are only the read verbs the emulator answers (it is read-only).
"""

from __future__ import annotations

from analyzer.cluster import ClusterData, ResourceType

READ = ("get", "list")
CREATE = ("create",)


def _rt(
    group: str,
    version: str,
    resource: str,
    kind: str,
    *,
    namespaced: bool,
    short: tuple[str, ...] = (),
    verbs: tuple[str, ...] = READ,
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        resource=resource,
        kind=kind,
        namespaced=namespaced,
        singular=kind.lower(),
        short_names=short,
        verbs=verbs,
    )


BUILTIN_TYPES: tuple[ResourceType, ...] = (
    # core/v1
    _rt("", "v1", "pods", "Pod", namespaced=True, short=("po",)),
    _rt("", "v1", "nodes", "Node", namespaced=False, short=("no",)),
    _rt("", "v1", "namespaces", "Namespace", namespaced=False, short=("ns",)),
    _rt("", "v1", "events", "Event", namespaced=True, short=("ev",)),
    _rt("", "v1", "configmaps", "ConfigMap", namespaced=True, short=("cm",)),
    _rt("", "v1", "services", "Service", namespaced=True, short=("svc",)),
    _rt("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True, short=("sa",)),
    _rt(
        "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", namespaced=True, short=("pvc",)
    ),
    _rt("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short=("pv",)),
    # Listed so clients see a normal API, but the store never holds any (never read Secrets).
    _rt("", "v1", "secrets", "Secret", namespaced=True),
    _rt("", "v1", "resourcequotas", "ResourceQuota", namespaced=True, short=("quota",)),
    # apps/v1
    _rt("apps", "v1", "deployments", "Deployment", namespaced=True, short=("deploy",)),
    _rt("apps", "v1", "replicasets", "ReplicaSet", namespaced=True, short=("rs",)),
    _rt("apps", "v1", "statefulsets", "StatefulSet", namespaced=True, short=("sts",)),
    _rt("apps", "v1", "daemonsets", "DaemonSet", namespaced=True, short=("ds",)),
    # events.k8s.io/v1: the same events as core/v1, in the newer shape
    _rt("events.k8s.io", "v1", "events", "Event", namespaced=True, short=("ev",)),
    # authorization.k8s.io/v1: create-only reviews, answered "allowed"
    _rt(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        namespaced=False,
        verbs=CREATE,
    ),
    _rt(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        namespaced=False,
        verbs=CREATE,
    ),
    # batch/v1
    _rt("batch", "v1", "jobs", "Job", namespaced=True),
    _rt("batch", "v1", "cronjobs", "CronJob", namespaced=True, short=("cj",)),
    # the rest, in the order a real server lists its groups
    _rt("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True),
    _rt(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        namespaced=False,
        short=("pc",),
    ),
    _rt("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, short=("sc",)),
    _rt("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        namespaced=False,
    ),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        namespaced=False,
    ),
    _rt(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short=("crd", "crds"),
    ),
)

# Categories as a real server reports them (`kubectl get all`, `kubectl get api-extensions`).
CATEGORIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("all",),
    ("", "services"): ("all",),
    ("apps", "deployments"): ("all",),
    ("apps", "replicasets"): ("all",),
    ("apps", "statefulsets"): ("all",),
    ("apps", "daemonsets"): ("all",),
    ("batch", "jobs"): ("all",),
    ("batch", "cronjobs"): ("all",),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): ("api-extensions",),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): ("api-extensions",),
    ("apiextensions.k8s.io", "customresourcedefinitions"): ("api-extensions",),
}

# Subresources served besides the objects: (group, parent resource) -> {name: (kind, verbs)}.
SUBRESOURCES: dict[tuple[str, str], dict[str, tuple[str, tuple[str, ...]]]] = {
    ("", "pods"): {"log": ("Pod", ("get",))},
}

# The order of groups in /apis on a real server; CRD groups follow, sorted by name.
GROUP_ORDER: tuple[str, ...] = (
    "apps",
    "events.k8s.io",
    "authorization.k8s.io",
    "batch",
    "coordination.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "node.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
)

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
SECRET_KEY = ("", "secrets")


def builtin_types() -> list[ResourceType]:
    return list(BUILTIN_TYPES)


def add_builtin_types(data: ClusterData) -> None:
    for rtype in BUILTIN_TYPES:
        data.add_type(rtype)


def group_rank(group: str) -> tuple[int, str]:
    """Sort key putting built-in groups in the real server's order, then others by name."""
    if group in GROUP_ORDER:
        return (GROUP_ORDER.index(group), "")
    return (len(GROUP_ORDER), group)
