"""Kubernetes resource types as discovery describes them: the built-in types of a v1.30 API
server (kinds, scopes, singular and short names, categories), and the type a
CustomResourceDefinition serves. Verbs are only the read verbs the emulator answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


class InvalidCRD(ValueError):
    """A CustomResourceDefinition that does not define a servable type."""


@dataclass(frozen=True)
class ResourceType:
    """One API resource as discovery describes it."""

    group: str  # "" for the core group
    version: str
    resource: str  # plural, as in the URL
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ("get", "list")
    # CRD additionalPrinterColumns ({name, type, jsonPath, priority?, format?}); empty for
    # built-ins, whose tables the emulator prints itself.
    printer_columns: tuple[dict[str, Any], ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.resource)

    @property
    def display(self) -> str:
        """The resource as kubectl and error messages name it: "pods", "gpus.tensor-fusion.ai"."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def path(self, namespace: str | None = None) -> str:
        """The URL path that lists it, in one namespace or everywhere."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.resource}"
        return f"{base}/{self.resource}"


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


def builtin(resource: str, group: str = "") -> ResourceType:
    """The built-in type of a resource in a group ("" for the core group)."""
    return next(t for t in BUILTIN_TYPES if t.key == (group, resource))


CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
SECRET_KEY = ("", "secrets")


def group_rank(group: str) -> tuple[int, str]:
    """Sort key putting built-in groups in the real server's order, then others by name."""
    if group in GROUP_ORDER:
        return (GROUP_ORDER.index(group), "")
    return (len(GROUP_ORDER), group)


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for kube-aware version order: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > other."""
    m = _VERSION_RE.match(version)
    if m is None:
        return (3, 0, 0, version)
    major, stage, minor = m.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), "")


def served_versions(crd: dict[str, Any]) -> set[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return {v["name"] for v in versions if v.get("served", True) and v.get("name")}


def crd_type(crd: dict[str, Any], source: str = "<crd>") -> ResourceType:
    """The ResourceType a CustomResourceDefinition serves (its preferred served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    name = (crd.get("metadata") or {}).get("name")
    where = f"{source}: CustomResourceDefinition/{name}"
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not (group and plural and kind):
        raise InvalidCRD(
            f"{where}: spec.group, spec.names.plural and spec.names.kind are required"
        )
    if name != f"{plural}.{group}":
        raise InvalidCRD(f"{where}: metadata.name must be {plural}.{group}")
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        raise InvalidCRD(f"{where}: spec.scope must be Namespaced or Cluster")
    served = [v for v in spec.get("versions") or [] if v.get("served", True) and v.get("name")]
    if not served:
        raise InvalidCRD(f"{where}: no served version in spec.versions")
    preferred = min(served, key=lambda v: version_priority(v["name"]))
    columns = tuple(dict(c) for c in preferred.get("additionalPrinterColumns") or ())
    return ResourceType(
        group=group,
        version=preferred["name"],
        resource=plural,
        kind=kind,
        namespaced=spec["scope"] == "Namespaced",
        singular=names.get("singular") or kind.lower(),
        short_names=tuple(names.get("shortNames") or ()),
        printer_columns=columns,
    )
