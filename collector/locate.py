"""Where TensorFusion is installed, found from the cluster itself.

Users install the chart under any namespace and release name (`tensor-fusion-sys` is only the
documented default), so a plain `tf-collect` looks for the installation before it collects:

1. operator and hypervisor pods, by the `tensor-fusion.ai/component` label, cluster-wide;
2. the TensorFusion mutating webhook configuration: its service's namespace, and Helm's
   `meta.helm.sh/release-name` annotation;
3. the TensorFusionCluster CRD's Helm annotations;
4. the Helm release record of the `tensor-fusion` chart in the namespace found.

`-n` and `--release` override what is found, except that a namespace (or release) given that
holds no TensorFusion while another one does is reported and replaced by the one found. Each call may
be refused (RBAC); what could not be read is simply no clue.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from k8s.helm_record import ReleaseDecodeError, decode_record, latest_record
from k8s.tensorfusion import CHART, CHART_NAMESPACE, COMPONENT, TF_GROUP

from .filters import is_tf_webhook
from .kube import CallFailed, Kube

RELEASE_NAME = "meta.helm.sh/release-name"
RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
INSTANCE = "app.kubernetes.io/instance"
CLUSTER_CRD = f"tensorfusionclusters.{TF_GROUP}"


@dataclass(frozen=True)
class Clue:
    namespace: str
    release: str | None
    says: str  # what was found, as the terminal and the manifest quote it
    weight: int  # how strongly it places the installation: running pods outweigh records


@dataclass(frozen=True)
class Installation:
    namespace: str
    release: str
    found_by: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def found(self) -> bool:
        return bool(self.found_by)


def locate(kube: Kube, namespace: str | None, release: str | None) -> Installation:
    """The installation to collect from; `namespace`/`release` are what the user gave."""
    clues = _pod_clues(kube, namespace or CHART_NAMESPACE) + _webhook_clues(kube) + _crd_clues(kube)
    votes: Counter[str] = Counter()
    for clue in clues:
        votes[clue.namespace] += clue.weight
    warnings: list[str] = []
    if not votes:
        chosen = namespace or CHART_NAMESPACE
        warnings.append(
            "found no TensorFusion installation (no operator or hypervisor pod, no "
            f"TensorFusion webhook or CRD); collecting the cluster-wide evidence and namespace "
            f"{chosen}"
        )
        return Installation(chosen, release or chosen, (), tuple(warnings))
    detected = votes.most_common(1)[0][0]
    if namespace and namespace in votes:
        chosen = namespace
    else:
        chosen = detected
        if namespace:
            warnings.append(
                f"namespace {namespace} holds no TensorFusion; collecting from {detected}, "
                "where it was found"
            )
    others = sorted(ns for ns in votes if ns != chosen)
    if others:
        warnings.append(
            f"TensorFusion also appears in {', '.join(others)}; collecting from {chosen} "
            "(give -n to choose)"
        )
    here = [c for c in clues if c.namespace == chosen]
    named = Counter(c.release for c in here if c.release)
    if release is not None and named and release not in named:
        found = named.most_common(1)[0][0]
        warnings.append(f"release {release} is not TensorFusion's in {chosen}; using {found}")
        release = found
    if release is None:
        if named:
            release = named.most_common(1)[0][0]
        else:
            record = _helm_clue(kube, chosen)
            if record is not None:
                here.append(record)
                release = record.release
    if release is None:
        release = chosen
        warnings.append(f"found no Helm release of TensorFusion in {chosen}; assuming {release}")
    return Installation(chosen, release, tuple(c.says for c in here), tuple(warnings))


def _items(kube: Kube, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
    try:
        return kube.list(path, label_selector=label_selector).get("items") or []
    except CallFailed:
        return []


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _pod_clues(kube: Kube, candidate: str) -> list[Clue]:
    """One clue per namespace and component: a cluster has a hypervisor pod per GPU node. A
    user who may not list pods cluster-wide is asked about the namespace given (or the
    default) instead."""
    selector = f"{COMPONENT} in (operator,hypervisor)"
    try:
        pods = kube.list("/api/v1/pods", label_selector=selector).get("items") or []
    except CallFailed as exc:
        if exc.status != "forbidden":
            return []
        pods = _items(kube, f"/api/v1/namespaces/{candidate}/pods", selector)
    found: dict[tuple[str, str, str | None], list[str]] = {}
    for pod in pods:
        meta = _meta(pod)
        role = (meta.get("labels") or {}).get(COMPONENT, "")
        release = (meta.get("labels") or {}).get(INSTANCE) or _release_of_controller(pod)
        key = (meta.get("namespace", ""), role, release)
        found.setdefault(key, []).append(meta.get("name", ""))
    clues = []
    for (ns, role, release), names in sorted(found.items(), key=lambda kv: kv[0][:2]):
        says = f"{role} pod {ns}/{min(names)}"
        if len(names) > 1:
            says = f"{len(names)} {role} pods in {ns}"
        weight = 10 if role == "operator" else 3
        clues.append(Clue(ns, release, says, weight))
    return clues


def _release_of_controller(pod: dict[str, Any]) -> str | None:
    """The release in the name of the chart's controller ReplicaSet (<release>-controller-<hash>)."""
    for owner in _meta(pod).get("ownerReferences") or []:
        name = owner.get("name", "")
        head, sep, _ = name.rpartition("-controller-")
        if owner.get("kind") == "ReplicaSet" and sep and head:
            return head
    return None


def _webhook_clues(kube: Kube) -> list[Clue]:
    clues = []
    path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    for config in _items(kube, path):
        if not is_tf_webhook(config):
            continue
        annotations = _meta(config).get("annotations") or {}
        for hook in config.get("webhooks") or []:
            service = (hook.get("clientConfig") or {}).get("service") or {}
            if service.get("namespace"):
                clues.append(
                    Clue(
                        service["namespace"],
                        annotations.get(RELEASE_NAME),
                        f"webhook {hook.get('name')} served by "
                        f"{service['namespace']}/{service.get('name')}",
                        5,
                    )
                )
                break
    return clues


def _crd_clues(kube: Kube) -> list[Clue]:
    try:
        crd = kube.get_json(
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CLUSTER_CRD}"
        )
    except CallFailed:
        return []
    annotations = _meta(crd).get("annotations") or {}
    ns = annotations.get(RELEASE_NAMESPACE)
    if not ns:
        return []
    release = annotations.get(RELEASE_NAME)
    return [Clue(ns, release, f"CRD {CLUSTER_CRD} installed by Helm release {ns}/{release}", 1)]


def _helm_clue(kube: Kube, namespace: str) -> Clue | None:
    """The deployed release of the tensor-fusion chart in `namespace`, from Helm's records
    (decoded in memory; nothing of them is kept)."""
    selector = "owner=helm,status=deployed"
    for path, from_secret in (
        (f"/api/v1/namespaces/{namespace}/secrets", True),
        (f"/api/v1/namespaces/{namespace}/configmaps", False),
    ):
        by_release: dict[str, list[dict[str, Any]]] = {}
        for record in _items(kube, path, selector):
            name = (_meta(record).get("labels") or {}).get("name", "")
            by_release.setdefault(name, []).append(record)
        for name, records in sorted(by_release.items()):
            try:
                release = decode_record(latest_record(records) or {}, from_secret=from_secret)
            except ReleaseDecodeError:
                continue
            chart = ((release.get("chart") or {}).get("metadata") or {}).get("name")
            if chart == CHART:
                return Clue(namespace, name, f"Helm release {namespace}/{name} of chart {CHART}", 1)
    return None
