"""Variants of a bundle that must give the same findings: what a cluster nobody here has seen
changes (names, platform, Event shape, list order, unrelated workloads) and a rule must not
depend on.

A variant rewrites a bundle's members (member name -> bytes, as `bundlekit.read_members`
gives them) instead of serving and collecting a changed scenario again. Transforms compose;
each renaming one records its mapping, so a test can say which objects the findings of the
variant are about (`Variant.ref`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collector.bundle import dump_json, log_member, objects_member

Members = dict[str, bytes]


@dataclass
class Variant:
    members: Members
    # How the variant renamed what the original named, one text function per renaming.
    renames: list[Callable[[str], str]] = field(default_factory=list)

    def ref(self, original: str) -> str:
        """An object reference ("Kind/ns/name", "Kind/name") of the original bundle, as the
        variant names that object."""
        for renamed in self.renames:
            original = renamed(original)
        return original

    def write(self, directory: Path) -> Path:
        """The variant as an unpacked bundle directory."""
        for name, data in self.members.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return directory


Transform = Callable[[Variant], Variant]


def compose(*transforms: Transform) -> Transform:
    def composed(variant: Variant) -> Variant:
        for transform in transforms:
            variant = transform(variant)
        return variant

    return composed


# ---------------------------------------------------------------- member helpers


def _load(data: bytes) -> Any:
    return json.loads(data)


def _map_json(value: Any, text: Callable[[str], str]) -> Any:
    """`value` with `text` applied to every string in it, map keys included."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [_map_json(v, text) for v in value]
    if isinstance(value, dict):
        return {text(k): _map_json(v, text) for k, v in value.items()}
    return value


def _objects(members: Members, resource: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """(member, listing) of every objects member of `resource` ("pods", "nodes", ...)."""
    for name in sorted(members):
        parts = name.split("/")
        if len(parts) == 3 and parts[0] == "objects" and parts[1] == resource:
            yield name, _load(members[name])


def _items(members: Members, resource: str) -> list[dict[str, Any]]:
    return [o for _, listing in _objects(members, resource) for o in listing.get("items", [])]


# ---------------------------------------------------------------- renaming

_WORD = "A-Za-z0-9"


def substitute(text: str, mapping: dict[str, str], keep: tuple[str, ...] = ()) -> str:
    """`text` with every atom of `mapping` that stands as a token (not inside a longer word:
    "ml-team" in "ml-team-quota" or "pods/ml-team.json", never in "xml-teams") replaced, all
    at once and the longest atom first; the strings of `keep` (images) stay as they are."""
    return substitution(mapping, keep)(text)


def substitution(mapping: dict[str, str], keep: tuple[str, ...] = ()) -> Callable[[str], str]:
    """`substitute` with this mapping, as a function of the text (each text done once)."""
    if not mapping:
        return lambda text: text
    atoms = sorted(mapping, key=lambda a: (-len(a), a))
    kept = "|".join(re.escape(k) for k in sorted(keep, key=lambda k: (-len(k), k)))
    pattern = re.compile(
        (f"(?P<keep>{kept})|" if kept else "(?P<keep>(?!))|")
        + f"(?<![{_WORD}])(?:{'|'.join(re.escape(a) for a in atoms)})(?![{_WORD}])"
    )
    done: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        return match.group("keep") or mapping[match.group(0)]

    def text(value: str) -> str:
        found = done.get(value)
        if found is None:
            found = done[value] = pattern.sub(replace, value)
        return found

    return text


def rewrite_names(variant: Variant, mapping: dict[str, str]) -> Variant:
    """Every member and member name with `mapping` substituted; images, however they are
    written, stay as they are."""
    text = substitution(mapping, tuple(sorted(_images(variant.members))))
    return rewrite_text(variant, text, substitution(mapping))


def rewrite_text(
    variant: Variant, text: Callable[[str], str], ref: Callable[[str], str], key: Any = None
) -> Variant:
    """Every member and member name through `text`; JSON members string by string (so that
    escapes inside a JSON string read like the text they stand for), a value through
    `key(member, key, value)` first when given. `ref` renames an object reference."""
    out: Members = {}
    for name, data in variant.members.items():
        if name.endswith(".json"):
            value = _load(data)
            if key is not None:
                value = _map_keyed(value, lambda k, v, name=name: key(name, k, v))
            data = dump_json(_map_json(value, text))
        else:
            data = text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        out[text(name)] = data
    return Variant(out, [*variant.renames, ref])


def _map_keyed(value: Any, fn: Callable[[str, str], str]) -> Any:
    """`value` with each string `v` under a map key `k` replaced by fn(k, v)."""
    if isinstance(value, list):
        return [_map_keyed(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: fn(k, v) if isinstance(v, str) else _map_keyed(v, fn) for k, v in value.items()}
    return value


# Names Kubernetes and TensorFusion fix themselves: never renamed.
FIXED_NAMES = frozenset({
    "default", "kube-system", "kube-public", "kube-node-lease", "kube-root-ca.crt",
    "tensor-fusion", "tensor-fusion-operator-leader-info",
})  # fmt: skip
# TensorFusion's fixed label values and words the rules read in names and messages.
FIXED_WORDS = frozenset({
    "operator", "hypervisor", "worker", "client", "controller", "manager", "vector",
    "scheduler", "webhook", "standalone", "node", "gpu", "nvidia",
})  # fmt: skip
_HASHED = re.compile(r"^(.+)-[a-z0-9]{5,10}$")


def name_atoms(members: Members) -> dict[str, str]:
    """The names a cluster chooses, each with the kind of thing it names: namespaces (the
    TensorFusion namespace and Helm release among them), nodes (also by their short host name),
    workloads (a pod of a ReplicaSet is named through its Deployment, a TensorFusion worker
    through its workload), standalone pods, pools, quotas, connections, ConfigMaps and GPUs.
    A name that starts with another atom and a dash is left to that atom (keeping the prefix
    structure); so is a name that a fixed string (a container name, an image, a label key, a
    CRD name, a fixed label value) contains as a token, which renaming would change."""
    manifest = _load(members["manifest.json"])
    found: dict[str, str] = {}

    def add(name: Any, kind: str) -> None:
        if isinstance(name, str) and name and name not in FIXED_NAMES:
            found.setdefault(name, kind)

    tf = manifest.get("tensorfusion", {})
    add(tf.get("namespace"), "tf-namespace")
    add(tf.get("release"), "tf-release")
    for _, listing in _listings(members):
        for obj in listing.get("items", []):
            _obj_atoms(obj, add)
    for art in manifest["artifacts"]:
        add(art.get("namespace"), "namespace")
    for host in sorted(_ec2_hosts(members)):
        add(host, "node")
        add(short_host(host), "node")
    protected = sorted(_protected(members))
    clashes = {a for a in found if any(substitute(p, {a: "\0"}) != p for p in protected)}
    atoms = {a: k for a, k in found.items() if a not in FIXED_WORDS and a not in clashes}
    return {
        a: k for a, k in atoms.items() if not any(a != b and a.startswith(b + "-") for b in atoms)
    }


def _obj_atoms(obj: dict[str, Any], add: Callable[[Any, str], None]) -> None:
    kind = obj.get("kind")
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    add(meta.get("namespace"), "namespace")
    if kind == "Event":
        return
    if kind in ("Node", "GPUNode"):
        add(name, "node")
        add(short_host(name), "node")
        return
    if kind == "Pod":
        add(dig(obj, "spec", "nodeName"), "node")
        owner = (meta.get("ownerReferences") or [{}])[0]
        if owner.get("kind") == "ReplicaSet":
            add(_unhashed(owner.get("name")), "workload")
        elif owner.get("name"):
            add(owner["name"], "workload")
        else:
            add(name, "pod")
        return
    if kind == "ReplicaSet":
        owner = (meta.get("ownerReferences") or [{}])[0]
        add(owner.get("name") or _unhashed(name), "workload")
        return
    if kind == "TensorFusionConnection":
        add(name.split("-tf-vgpu-")[0] if isinstance(name, str) else None, "connection")
        return
    kinds = {
        "Deployment": "workload", "StatefulSet": "workload", "DaemonSet": "workload",
        "Job": "workload", "TensorFusionWorkload": "workload", "GPUPool": "pool",
        "GPUResourceQuota": "quota", "ConfigMap": "configmap", "GPU": "gpu",
    }  # fmt: skip
    if kind in kinds:
        add(name, kinds[kind])


_DOMAIN = re.compile(r"^([^.]+)\.(?:[a-z0-9-]+\.)*[a-z]+$")


def short_host(name: Any) -> str | None:
    """The host part of a node named by its DNS name (ip-10-0-3-17 of ip-10-0-3-17.ec2.internal),
    which logs and labels also use; None for a name that is no host.domain (cn-hangzhou.10.0.0.1
    of Alibaba ACK starts with a region)."""
    found = _DOMAIN.match(name) if isinstance(name, str) else None
    return found.group(1) if found else None


_EC2_HOST = re.compile(
    r"(?<![A-Za-z0-9.])ip-\d{1,3}(?:-\d{1,3}){3}\.(?:[a-z0-9-]+\.)?(?:ec2|compute)\.internal\b"
)


def _ec2_hosts(members: Members) -> set[str]:
    """The EC2 host names any member mentions: nodes, and hosts that are none (the control
    plane's scheduler as an Event's reportingInstance names it)."""
    return {
        h for data in members.values() for h in _EC2_HOST.findall(data.decode("utf-8", "replace"))
    }


def _unhashed(name: Any) -> str | None:
    found = _HASHED.match(name) if isinstance(name, str) else None
    return found.group(1) if found else None


def dig(obj: Any, *path: str) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _walk(value: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    if isinstance(value, dict):
        visit(value)
        for v in value.values():
            _walk(v, visit)
    elif isinstance(value, list):
        for v in value:
            _walk(v, visit)


def _listings(members: Members) -> Iterable[tuple[str, dict[str, Any]]]:
    for name in sorted(members):
        if name.startswith("objects/"):
            yield name, _load(members[name])


def _images(members: Members) -> set[str]:
    """Every image the objects name, as it is written there and as a kubelet's message may
    write it (without docker.io/, without the tag or digest)."""
    found: set[str] = set()

    def visit(obj: dict[str, Any]) -> None:
        for key in ("image", "imageID"):
            image = obj.get(key)
            if isinstance(image, str) and image:
                short = re.sub(r"^(docker\.io/)?(library/)?", "", image)
                found.update({image, short, re.split(r"[@]|:(?=[^/]*$)", image)[0]})
                found.add(re.split(r"[@]|:(?=[^/]*$)", short)[0])

    for _, listing in _listings(members):
        _walk(listing, visit)
    return {i for i in found if i}


def _protected(members: Members) -> set[str]:
    """Strings no rename may change, besides images: container names, CRD names, GPU models,
    the domains of label and annotation keys (a key's name part may hold a name TensorFusion
    derived from a pool: tensor-fusion.ai/pool-<pool>)."""
    found: set[str] = set()

    def visit(obj: dict[str, Any]) -> None:
        if isinstance(obj.get("image"), str) and isinstance(obj.get("name"), str):
            found.add(obj["name"])  # a container or its status
        for key in ("labels", "annotations"):
            if isinstance(obj.get(key), dict):
                found.update(k.split("/")[0] for k in obj[key] if "/" in k)
        for key in ("gpuModel", "model"):
            if isinstance(obj.get(key), str):
                found.add(obj[key])

    for name, listing in _listings(members):
        _walk(listing, visit)
        if name.startswith("objects/customresourcedefinitions"):
            found.update(dig(o, "metadata", "name") or "" for o in listing.get("items", []))
    return found


_NEW = {
    "tf-namespace": ["nexus-gpu"],
    "tf-release": ["fusion-prod"],
    "namespace": ["team-aurora", "team-borealis", "team-cascade", "team-dune", "team-ember",
                  "team-fjord", "team-glacier", "team-harbor"],
    "node": [f"k8s-pool{i // 4 + 1}-node{i % 4 + 1:02d}" for i in range(40)],
    "workload": [f"{w}-{s}" for s in ("svc", "job", "app") for w in (
        "orion", "lyra", "vega", "altair", "rigel", "deneb", "mira", "sirius", "castor",
        "pollux", "spica", "antares", "izar", "electra", "maia", "merope", "talitha")],
    "pod": ["sandbox-one", "sandbox-two", "sandbox-three", "sandbox-four", "sandbox-five"],
    "pool": ["pool-alpha", "pool-beta", "pool-gamma"],
    "quota": ["budget-alpha", "budget-beta", "budget-gamma"],
    "connection": ["link-alpha", "link-beta", "link-gamma", "link-delta"],
    "configmap": ["settings-alpha", "settings-beta", "settings-gamma", "settings-delta"],
    # GPU objects are named by the card's UUID.
    "gpu": [f"gpu-5eed{i:04x}-{i:04x}-4{i:03x}-8{i:03x}-{i:012x}" for i in range(1, 65)],
}  # fmt: skip


def rename(variant: Variant) -> Variant:
    """Every name the cluster chose (name_atoms) renamed consistently in every member and
    member name: a pod keeps the prefix of its renamed ReplicaSet and Deployment, a hypervisor
    pod follows its node. The TensorFusion namespace and Helm release, one name in the samples,
    get two (split_release), and the manifest's record of them follows."""
    tf = _load(variant.members["manifest.json"]).get("tensorfusion", {})
    if tf.get("namespace") and tf.get("namespace") == tf.get("release"):
        variant = split_release(variant, tf["namespace"])
    atoms = name_atoms(variant.members)
    taken = set(atoms) | _all_tokens(variant.members)
    mapping: dict[str, str] = {}
    used: dict[str, int] = {}
    by_full: dict[str, str] = {}
    for atom, kind in sorted(atoms.items(), key=lambda ak: (ak[1], ak[0])):
        if kind == "node" and any(short_host(f) == atom for f in atoms):
            continue  # the short host name of a node follows its full name, below
        mapping[atom] = _fresh(kind, used, taken)
        if kind == "node" and short_host(atom):
            by_full[str(short_host(atom))] = mapping[atom]
    mapping.update({short: new for short, new in by_full.items() if short in atoms})
    return rewrite_names(variant, mapping)


# Marks the uses of a name that are the Helm release's, where the namespace has the same name.
RELEASE = "tfrelease"
# Values that name the release: the manifest's record, Helm's and the chart's labels, and the
# service account the chart names after it.
RELEASE_KEYS = frozenset({
    "release", "meta.helm.sh/release-name", "app.kubernetes.io/instance", "serviceAccount",
    "serviceAccountName",
})  # fmt: skip


def split_release(variant: Variant, name: str) -> Variant:
    """The uses of `name` (the TensorFusion namespace and its Helm release) that are the
    release's, as RELEASE: a prefix of what the chart names after it (<release>-controller,
    <release>-config, <release>-mutating-webhook, ...), the Helm release (helm/<release>.json,
    its `name`), its service and service account and the values of RELEASE_KEYS. Every other
    use is the namespace's."""
    n = re.escape(name)
    pattern = re.compile(
        rf"(?<![{_WORD}])(?:{n}(?=-[{_WORD}])"  # <release>-controller
        rf"|(?:(?<=helm[:/])|(?<=serviceaccount:{n}:)){n}(?![{_WORD}])"  # the release, its SA
        rf"|{n}(?=\.{n}(?![{_WORD}])))"  # the service <release>.<namespace>
    )

    def text(value: str) -> str:
        return pattern.sub(RELEASE, value)

    def keyed(member: str, key: str, value: str) -> str:
        named = key in RELEASE_KEYS or (member.startswith("helm/") and key == "name")
        return RELEASE if named and value == name else value

    return rewrite_text(variant, text, text, keyed)


def _fresh(kind: str, used: dict[str, int], taken: set[str]) -> str:
    names = _NEW[kind]
    while True:
        i = used.get(kind, 0)
        used[kind] = i + 1
        new = names[i] if i < len(names) else f"{names[i % len(names)]}-{i // len(names)}"
        if new not in taken:
            taken.add(new)
            return new


_TOKEN = re.compile(f"[{_WORD}][{_WORD}.-]*")


def _all_tokens(members: Members) -> set[str]:
    return {
        t
        for data in members.values()
        for t in _TOKEN.findall(data.decode("utf-8", "surrogateescape"))
    }


# ---------------------------------------------------------------- Event shape

_ACTIONS = {
    "Scheduled": "Binding", "FailedScheduling": "Scheduling", "Pulling": "Pulling",
    "Pulled": "Pulling", "Created": "Create", "Started": "Start", "Killing": "Kill",
    "SuccessfulCreate": "Create", "FailedCreate": "Create", "ScalingReplicaSet": "Scale",
    "BackOff": "Restart", "Unhealthy": "Probe", "FailedMount": "Mount",
}  # fmt: skip


def events_v1(variant: Variant) -> Variant:
    """Every Event in the shape the core/v1 API serves for one written through
    events.k8s.io/v1 (kube-scheduler and TensorFusion's recorders): eventTime (a MicroTime)
    instead of firstTimestamp and lastTimestamp (null), no count but a series when it happened
    more than once, reportingComponent/Instance and an action instead of source."""
    out = dict(variant.members)
    for name, listing in _objects(variant.members, "events"):
        listing["items"] = [_event_v1(e) for e in listing.get("items", [])]
        out[name] = dump_json(listing)
    return Variant(out, variant.renames)


def _micro(ts: str) -> str:
    return ts[:-1] + ".000000Z" if ts.endswith("Z") and "." not in ts else ts


def _event_v1(event: dict[str, Any]) -> dict[str, Any]:
    if event.get("eventTime") and not event.get("firstTimestamp"):
        return event  # already written through events.k8s.io
    ev = dict(event)
    first = ev.pop("firstTimestamp", None) or ev.get("lastTimestamp")
    last = ev.pop("lastTimestamp", None) or first
    count = ev.pop("count", None) or 1
    source = ev.get("source") or {}
    component = ev.get("reportingComponent") or source.get("component") or "unknown"
    reason = ev.get("reason", "")
    action = _ACTIONS.get(reason) or ("Pulling" if "pull" in str(ev.get("message", "")) else reason)
    ev.update(
        firstTimestamp=None,
        lastTimestamp=None,
        eventTime=_micro(first or ev["metadata"].get("creationTimestamp", "")),
        reportingComponent=component,
        reportingInstance=ev.get("reportingInstance")
        or f"{component}-{source.get('host') or 'leader'}",
        action=ev.get("action") or action or "Update",
        source={},
    )
    if count > 1:
        ev["series"] = {"count": count, "lastObservedTime": _micro(last)}
    return ev


# ---------------------------------------------------------------- list order


def shuffle(seed: int) -> Transform:
    """The items of every objects member, and the manifest's artifacts (with the paths of
    each), in a seeded random order."""

    def shuffled(variant: Variant) -> Variant:
        out = dict(variant.members)
        for name, listing in _listings(variant.members):
            listing["items"] = _shuffled(listing.get("items", []), f"{seed}:{name}")
            out[name] = dump_json(listing)
        manifest = _load(out["manifest.json"])
        manifest["artifacts"] = _shuffled(manifest["artifacts"], f"{seed}:manifest")
        for art in manifest["artifacts"]:
            if len(art.get("paths") or []) > 1:
                art["paths"] = _shuffled(art["paths"], f"{seed}:{art['id']}")
        out["manifest.json"] = dump_json(manifest)
        return Variant(out, variant.renames)

    return shuffled


def _shuffled(items: list[Any], seed: str) -> list[Any]:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items


# ---------------------------------------------------------------- platform

# Node labels a cloud platform sets (EKS and AWS's CSI and cloud provider, GKE, ACK), and the
# instance type and topology labels, which each platform fills its own way.
_CLOUD_LABELS = (
    "eks.amazonaws.com/", "k8s.amazonaws.com/", "k8s.io/cloud-provider-aws",
    "topology.ebs.csi.aws.com/", "topology.k8s.aws/", "failure-domain.beta.kubernetes.io/",
    "cloud.google.com/", "alibabacloud.com/", "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type", "topology.kubernetes.io/",
)  # fmt: skip
# A Kubernetes version a cloud platform builds (v1.30.4-eks-a737599, v1.29.6-gke.1326000).
_PLATFORM_VERSION = re.compile(r"\bv(\d+\.\d+\.\d+)-(?:eks-[0-9a-f]+|gke\.\d+|aliyun\.\d+)\b")
_MAINLAND = re.compile(r"^cn-")


def platform(kind: str) -> Transform:
    """The nodes as another platform shows them: `gke` (Google Kubernetes Engine; Alibaba
    ACK for a cluster in a mainland-China region, where GKE has none) or `onprem` (kubeadm on
    own hardware, CRI-O, no cloud labels; region labels kept only where an admin set a
    mainland-China one). Node names change to the platform's (a rename); the labels
    TensorFusion reads (nvidia.com/*, tensor-fusion.ai/*, kubernetes.io/*, and every key a
    GPUPool's node selector or the controller's GPU node selector names) keep their values;
    so does the Kubernetes minor version."""

    def transformed(variant: Variant) -> Variant:
        nodes = _items(variant.members, "nodes")
        mainland = any(_MAINLAND.match(_label(n, "topology.kubernetes.io/region")) for n in nodes)
        shape = "ack" if kind == "gke" and mainland else kind
        mapping = _platform_names(variant.members, nodes, shape)
        variant = rewrite_names(variant, mapping)
        out = dict(variant.members)
        selected = _selector_keys(out)
        for name, listing in _objects(out, "nodes"):
            listing["items"] = [_node_as(n, shape, selected) for n in listing.get("items", [])]
            out[name] = dump_json(listing)
        return Variant(_platform_versions(out, shape), variant.renames)

    return transformed


def _selector_keys(members: Members) -> set[str]:
    """The node label keys TensorFusion selects GPU nodes by: in GPUPools' node selectors, and
    in the controller's initialGpuNodeLabelSelector (key=value[,key=value], a Helm value and
    the env INITIAL_GPU_NODE_LABEL_SELECTOR)."""
    found = {
        str(e.get("key"))
        for pool in _items(members, "gpupools")
        for term in dig(pool, "spec", "nodeManagerConfig", "nodeSelector", "nodeSelectorTerms")
        or []
        for e in term.get("matchExpressions") or []
    }

    def visit(obj: dict[str, Any]) -> None:
        values = [v for k, v in obj.items() if k == "initialGpuNodeLabelSelector"]
        if str(obj.get("name", "")).endswith("GPU_NODE_LABEL_SELECTOR"):
            values.append(obj.get("value"))
        for value in values:
            if isinstance(value, str):
                found.update(p.split("=")[0].strip() for p in value.split(",") if "=" in p)

    for name in sorted(members):
        if name.startswith(("objects/", "helm/")):
            _walk(_load(members[name]), visit)
    return found


def _label(obj: dict[str, Any], key: str) -> str:
    return str((dig(obj, "metadata", "labels") or {}).get(key, ""))


def _gpu_node(node: dict[str, Any]) -> bool:
    labels = dig(node, "metadata", "labels") or {}
    capacity = dig(node, "status", "capacity") or {}
    return any(k.startswith(("nvidia.com/", "tensor-fusion.ai/")) for k in [*labels, *capacity])


def _platform_names(members: Members, nodes: list[dict[str, Any]], shape: str) -> dict[str, str]:
    """New names of the nodes (and of their short host names) on platform `shape`."""
    names = sorted(
        {n["metadata"]["name"] for n in nodes}
        | {n["metadata"]["name"] for n in _items(members, "gpunodes")}
        | {p for p in (dig(o, "spec", "nodeName") for o in _items(members, "pods")) if p}
        | _ec2_hosts(members)
    )
    gpu = {n["metadata"]["name"] for n in nodes if _gpu_node(n)} | {
        n["metadata"]["name"] for n in _items(members, "gpunodes")
    }
    mapping: dict[str, str] = {}
    counts: dict[bool, int] = {}
    for name in names:
        is_gpu = name in gpu
        i = counts[is_gpu] = counts.get(is_gpu, 0) + 1
        digest = _digest(name)
        if shape == "gke":
            pool = "gpu-a10g-pool" if is_gpu else "default-pool"
            new = f"gke-prod-{pool}-{digest[:8]}-{digest[8:12]}"
        elif shape == "ack":
            new = f"cn-hangzhou.10.{int(digest[:2], 16)}.{int(digest[2:4], 16)}.{i}"
        else:
            new = f"{'gpu' if is_gpu else 'cpu'}-host-{i:02d}"
        mapping[name] = new
        if short_host(name):
            mapping.setdefault(str(short_host(name)), new)
    return {old: new for old, new in mapping.items() if old not in FIXED_NAMES}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_SHAPES: dict[str, dict[str, Any]] = {
    "gke": {
        "os": "Container-Optimized OS from Google", "kernel": "6.1.100+",
        "runtime": "containerd://1.7.22", "version": "v{v}-gke.1326000",
        "region": "us-central1", "zones": "abcf",
    },
    "ack": {
        "os": "Alibaba Cloud Linux 3.2104 U10 (OpenAnolis Edition)",
        "kernel": "5.10.134-17.2.al8.x86_64", "runtime": "containerd://1.6.34",
        "version": "v{v}-aliyun.1", "region": "cn-hangzhou", "zones": "ijkh",
    },
    "onprem": {
        "os": "Ubuntu 22.04.4 LTS", "kernel": "5.15.0-113-generic",
        "runtime": "cri-o://1.29.1", "version": "v{v}",
    },
}  # fmt: skip


def _node_as(node: dict[str, Any], shape: str, selected: set[str]) -> dict[str, Any]:
    spec = _SHAPES[shape]
    meta = node.setdefault("metadata", {})
    name = meta.get("name", "")
    labels = dict(meta.get("labels") or {})
    kept = {k: v for k, v in labels.items() if k in selected}
    region = labels.get("topology.kubernetes.io/region", "")
    zone = labels.get("topology.kubernetes.io/zone", "")
    labels = {k: v for k, v in labels.items() if not k.startswith(_CLOUD_LABELS)}
    gpu = _gpu_node(node)
    letter = spec.get("zones", "a")[
        int(_digest(zone or name)[:2], 16) % len(spec.get("zones", "a"))
    ]
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if "csi.volume" not in k
    }
    node_spec = dict(node.get("spec") or {})
    node_spec.pop("providerID", None)
    if shape == "gke":
        zone_name = f"{spec['region']}-{letter}"
        labels.update({
            "cloud.google.com/gke-nodepool": "gpu-a10g-pool" if gpu else "default-pool",
            "cloud.google.com/machine-family": "g2" if gpu else "n2",
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/gke-boot-disk": "pd-balanced",
            "node.kubernetes.io/instance-type": "g2-standard-48" if gpu else "n2-standard-4",
            "topology.kubernetes.io/region": spec["region"],
            "topology.kubernetes.io/zone": zone_name,
        })  # fmt: skip
        if gpu:
            product = labels.get("nvidia.com/gpu.product", "nvidia-l4").lower()
            labels["cloud.google.com/gke-accelerator"] = product
        node_spec["providerID"] = f"gce://tf-prod-4411/{zone_name}/{name}"
        annotations["csi.volume.kubernetes.io/nodeid"] = json.dumps(
            {"pd.csi.storage.gke.io": f"projects/tf-prod-4411/zones/{zone_name}/instances/{name}"}
        )
    elif shape == "ack":
        zone_name = f"{spec['region']}-{letter}"
        labels.update({
            "alibabacloud.com/nodepool-id": "np" + _digest(str(gpu))[:30],
            "node.kubernetes.io/instance-type":
                "ecs.gn7i-c48g1.12xlarge" if gpu else "ecs.g7.xlarge",
            "topology.kubernetes.io/region": spec["region"],
            "topology.kubernetes.io/zone": zone_name,
        })  # fmt: skip
        node_spec["providerID"] = f"{spec['region']}.i-bp1{_digest(name)[:17]}"
    else:
        labels["node-role.kubernetes.io/worker"] = ""
        if _MAINLAND.match(region):  # an admin's topology labels, read by the China rule
            labels.update({"topology.kubernetes.io/region": region,
                           "topology.kubernetes.io/zone": zone})  # fmt: skip
    meta["labels"] = {**labels, **kept}
    meta["annotations"] = annotations
    node["spec"] = node_spec
    status = node.setdefault("status", {})
    status["addresses"] = [
        a for a in status.get("addresses") or [] if a.get("type") in ("InternalIP", "ExternalIP")
    ] + [{"type": "Hostname", "address": name}]
    info = status.setdefault("nodeInfo", {})
    version = _PLATFORM_VERSION.sub(lambda m: spec["version"].format(v=m.group(1)),
                               info.get("kubeletVersion", "v1.30.4-eks-0"))  # fmt: skip
    info.update(
        osImage=spec["os"],
        kernelVersion=spec["kernel"],
        containerRuntimeVersion=spec["runtime"],
        kubeletVersion=version,
        kubeProxyVersion=version,
    )
    return node


def _platform_versions(members: Members, shape: str) -> Members:
    """The API server's version, in the manifest and wherever a log quotes it."""
    fmt = _SHAPES[shape]["version"]
    out: Members = {}
    for name, data in members.items():
        text = data.decode("utf-8", "surrogateescape")
        new = _PLATFORM_VERSION.sub(lambda m: fmt.format(v=m.group(1)), text)
        out[name] = new.encode("utf-8", "surrogateescape") if new != text else data
    return out


# ---------------------------------------------------------------- unrelated workloads

_NOISE_TIME = "2026-11-30T09:40:00Z"


def noise(variant: Variant) -> Variant:
    """Namespaces that have nothing to do with TensorFusion, as a busy cluster has them: a
    healthy web pod, an app in CrashLoopBackOff, a pod that cannot pull an image of a private
    registry (not found), a Pending pod that asks for more CPU than any node has, an ingress
    controller (container `controller`) that was OOMKilled; their Warning events, and logs
    full of ERROR lines, all indexed in the manifest like the collector's own."""
    members = dict(variant.members)
    manifest = _load(members["manifest.json"])
    nodes = sorted(n["metadata"]["name"] for n in _items(members, "nodes"))
    node = nodes[0] if nodes else None
    taken = _all_tokens(members)
    web, etl, ing = (_unused(ns, taken) for ns in ("shop-web", "data-etl", "ingress-nginx"))
    pods, events, logs = _noise_objects(node, web, etl, ing)
    arts = manifest["artifacts"]
    listing = next((a for a in arts if a["id"] == "objects:pods"), None)
    failed_create = next(
        (
            a
            for a in arts
            if a.get("field_selector") == "reason=FailedCreate" and a["status"] == "ok"
        ),
        None,
    )
    for ns in sorted({p["metadata"]["namespace"] for p in pods}):
        chunk = [p for p in pods if p["metadata"]["namespace"] == ns]
        member = objects_member("pods", "", ns)
        members[member] = dump_json({"apiVersion": "v1", "kind": "PodList", "items": chunk})
        if listing is not None:
            listing["paths"] = sorted([*listing["paths"], member])
            listing["count"] = listing.get("count", 0) + len(chunk)
        else:
            arts.append(_objects_artifact("objects:pods", "pods", "Pod", None, member, len(chunk)))
        evs = [e for e in events if e["metadata"]["namespace"] == ns]
        about_pods = [e for e in evs if e["involvedObject"]["kind"] == "Pod"]
        failed = [e for e in evs if e["reason"] == "FailedCreate"]
        if failed_create is None:
            evs = about_pods  # this bundle did not list FailedCreate events
        member = objects_member("events", "", ns)
        members[member] = dump_json({"apiVersion": "v1", "kind": "EventList", "items": evs})
        for pod in sorted({e["involvedObject"]["name"] for e in about_pods}):
            art = _objects_artifact(f"objects:events:{ns}:{pod}", "events", "Event", ns, member,
                                    sum(e["involvedObject"]["name"] == pod for e in about_pods))  # fmt: skip
            art["field_selector"] = f"involvedObject.kind=Pod,involvedObject.name={pod}"
            arts.append(art)
        if failed_create is not None and failed:
            failed_create["paths"] = sorted({*failed_create["paths"], member})
            failed_create["count"] = failed_create.get("count", 0) + len(failed)
    for (ns, pod, container, previous), text in sorted(logs.items()):
        member = log_member(ns, pod, container, previous)
        members[member] = text.encode()
        arts.append({
            "id": f"log:{ns}:{pod}:{container}:{'previous' if previous else 'current'}",
            "type": "log", "step": "baseline/describe-unhealthy", "scope": "baseline",
            "status": "ok", "message": "", "duration_ms": 3, "namespace": ns, "pod": pod,
            "container": container, "previous": previous, "init_container": False,
            "lines": text.count("\n"), "paths": [member],
        })  # fmt: skip
    members["manifest.json"] = dump_json(manifest)
    return Variant(members, variant.renames)


def _unused(name: str, taken: set[str]) -> str:
    """`name`, or `name-2`, `name-3`... when the bundle already uses it."""
    found, i = name, 1
    while found in taken:
        i += 1
        found = f"{name}-{i}"
    return found


def _objects_artifact(
    art_id: str, resource: str, kind: str, ns: str | None, member: str, count: int
) -> dict[str, Any]:
    return {
        "id": art_id, "type": "objects", "step": "baseline/describe-unhealthy",
        "scope": "baseline", "status": "ok", "message": "", "duration_ms": 4, "group": "",
        "version": "v1", "resource": resource, "kind": kind, "namespaced": True,
        "namespace": ns, "label_selector": None, "field_selector": None, "paths": [member],
        "count": count,
    }  # fmt: skip


def _pod(ns: str, name: str, container: str, image: str, node: str | None,
         status: dict[str, Any], phase: str = "Running", cpu: str = "250m") -> dict[str, Any]:  # fmt: skip
    ready = status.get("ready", False)
    owner = _unhashed(name)
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "uid": _uid(ns + name),
            "creationTimestamp": "2026-11-30T08:00:00Z",
            "labels": {"app": owner or name, "pod-template-hash": name.split("-")[-2]},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": owner, "uid": _uid(ns + str(owner)),
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            **({"nodeName": node} if node and phase != "Pending" else {}),
            "containers": [{"name": container, "image": image,
                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"},
                                          "limits": {"memory": "512Mi"}}}],
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
        },
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "PodScheduled", "status": "False" if phase == "Pending" else "True",
                 **({"reason": "Unschedulable"} if phase == "Pending" else {}),
                 "lastTransitionTime": "2026-11-30T08:00:01Z"},
                {"type": "Ready", "status": str(ready), "lastTransitionTime": _NOISE_TIME},
            ],
            **({"containerStatuses": [{"name": container, "image": image, **status}]}
               if phase != "Pending" else {}),
        },
    }  # fmt: skip


def _uid(text: str) -> str:
    d = _digest(text)
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"


def _event(ns: str, pod: str, reason: str, message: str, count: int,
           component: str = "kubelet", host: str | None = None,
           kind: str = "Pod") -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": reason,
        "message": message, "count": count,
        "firstTimestamp": "2026-11-30T08:05:00Z", "lastTimestamp": _NOISE_TIME,
        "eventTime": None, "reportingComponent": component, "reportingInstance": host or "",
        "source": {"component": component, **({"host": host} if host else {})},
        "involvedObject": {"apiVersion": "v1" if kind == "Pod" else "apps/v1", "kind": kind,
                           "name": pod, "namespace": ns,
                           "uid": _uid(ns + pod)},
        "metadata": {"name": f"{pod}.{_digest(reason + pod)[:16]}", "namespace": ns,
                     "uid": _uid(reason + ns + pod), "creationTimestamp": "2026-11-30T08:05:00Z"},
    }  # fmt: skip


def _noise_objects(node: str | None, web: str, etl: str, ing: str) -> tuple[
    list[dict[str, Any]], list[dict[str, Any]], dict[tuple[str, str, str, bool], str]
]:  # fmt: skip
    cart = "cart-api-7c9d8f6b4-p5n2w"
    report = "legacy-report-5b7c9d8f6-q8w3z"
    export = "nightly-export-8d7c6b5f4-t2v9q"
    ingress = "ingress-nginx-controller-5d9f8b7c6-h4j8k"
    missing = "registry.example.com/shop/legacy-report:v0.9.1"
    crashed = {"lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                                            "startedAt": "2026-11-30T09:38:00Z",
                                            "finishedAt": "2026-11-30T09:38:20Z"}}}  # fmt: skip
    pods = [
        _pod(web, "storefront-6d8f7b9c5-k2m4x", "web", "nginx:1.27.2", node,
             {"ready": True, "restartCount": 0, "started": True,
              "state": {"running": {"startedAt": "2026-11-30T08:01:00Z"}}}),
        _pod(web, cart, "app", "registry.example.com/shop/cart-api:2.3.1", node,
             {"ready": False, "restartCount": 14, "started": False,
              "state": {"waiting": {"reason": "CrashLoopBackOff",
                                    "message": f"back-off 5m0s restarting failed container=app pod={cart}_{web}"}},
              **crashed}),
        _pod(web, report, "report", missing, node,
             {"ready": False, "restartCount": 0, "started": False,
              "state": {"waiting": {"reason": "ImagePullBackOff",
                                    "message": f'Back-off pulling image "{missing}"'}}},
             phase="Pending"),
        _pod(etl, export, "export", "python:3.12-slim", None, {}, phase="Pending", cpu="64"),
        _pod(ing, ingress, "controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", node,
             {"ready": True, "restartCount": 3, "started": True,
              "state": {"running": {"startedAt": "2026-11-30T09:30:00Z"}},
              "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                           "startedAt": "2026-11-30T09:00:00Z",
                                           "finishedAt": "2026-11-30T09:29:58Z"}}}),
    ]  # fmt: skip
    # The image-pull pod waits with its node assigned: kubelet has it.
    report_pod = pods[2]
    report_pod["status"]["phase"] = "Pending"
    report_pod["status"]["conditions"][0] = {"type": "PodScheduled", "status": "True",
                                             "lastTransitionTime": "2026-11-30T08:00:01Z"}  # fmt: skip
    report_pod["status"]["containerStatuses"] = [{
        "name": "report", "image": missing, "imageID": "", "ready": False, "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": "ImagePullBackOff",
                              "message": f'Back-off pulling image "{missing}"'}},
    }]  # fmt: skip
    if node:
        report_pod["spec"]["nodeName"] = node
    not_found = (
        f'Failed to pull image "{missing}": rpc error: code = NotFound desc = failed to pull and '
        f'unpack image "{missing}": failed to resolve reference "{missing}": {missing}: not found'
    )
    events = [
        _event(web, cart, "BackOff", f"Back-off restarting failed container app in pod {cart}_{web}({_uid(web + cart)})", 61, host=node),
        _event(web, cart, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", 40, host=node),
        _event(web, report, "Failed", not_found, 9, host=node),
        _event(web, report, "Failed", "Error: ErrImagePull", 9, host=node),
        _event(web, report, "BackOff", f'Back-off pulling image "{missing}"', 120, host=node),
        _event(web, report, "Failed", "Error: ImagePullBackOff", 120, host=node),
        _event(etl, export, "FailedScheduling",
               "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: "
               "4 No preemption victims found for incoming pod.", 12, component="default-scheduler"),
        # Pods other admission control refuses: a ResourceQuota, another webhook.
        _event(web, "storefront-6d8f7b9c5", "FailedCreate",
               'Error creating: pods "storefront-6d8f7b9c5-x9q2w" is forbidden: exceeded quota: '
               "compute-resources, requested: limits.cpu=2, used: limits.cpu=16, limited: limits.cpu=16",
               33, component="replicaset-controller", kind="ReplicaSet"),
        _event(etl, "nightly-export-8d7c6b5f4", "FailedCreate",
               'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: '
               "[require-team-label] you must provide labels: {\"team\"}",
               7, component="replicaset-controller", kind="ReplicaSet"),
        _event(ing, ingress, "BackOff", f"Back-off restarting failed container controller in pod {ingress}_{ing}({_uid(ing + ingress)})", 5, host=node),
    ]  # fmt: skip
    app_errors = "".join(
        f"2026-11-30T09:38:{i:02d}Z ERROR cart-api: payment backend unreachable: dial tcp "
        f"10.96.14.2:5432: connect: connection refused (attempt {i})\n"
        for i in range(1, 12)
    ) + (
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6b8f2a]\n"
    )
    ingress_log = (
        'E1130 09:29:50.120394       7 queue.go:131] "requeuing" err="Operation cannot be '
        'fulfilled on ingresses.networking.k8s.io \\"shop\\": the object has been modified"\n'
        'E1130 09:29:57.004217       7 main.go:64] "Error" err="OOMKilled: memory limit exceeded"\n'
        f'W1130 09:30:02.011873       7 controller.go:1214] Service "{web}/storefront" does not '
        "have any active Endpoint.\n"
        'I1130 09:30:02.500000       7 controller.go:190] "Configuration changes detected, '
        'backend reload required"\n'
    )
    logs = {
        (web, "storefront-6d8f7b9c5-k2m4x", "web", False):
            '10.40.1.7 - - [30/Nov/2026:09:39:59 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.30"\n',
        (web, cart, "app", False): app_errors,
        (web, cart, "app", True): app_errors,
        (ing, ingress, "controller", False): ingress_log,
        (ing, ingress, "controller", True): ingress_log + "fatal error: runtime: out of memory\n",
    }  # fmt: skip
    return pods, events, logs
