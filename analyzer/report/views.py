"""The report's views of the cluster, computed from the bundle through the reader.

- `kubectl`: the manual's baseline commands as kubectl would have printed them when the
  bundle was collected (ages count from the bundle's `created_at`, never from today).
- `discovery`: per GPU node, the chain Node -> GPUNode -> hypervisor -> GPUs, each link with
  its facts: ok, broken (a finding says so, and names it), waiting (not fine, but no finding
  blames it) or unknown (not collected), with the first broken link marked.
- `capacity`: per pool and per GPU node, TFLOPS and VRAM in total and available.
- `warnings`: the Warning events in time order, for the timeline.

Everything here is data (codes, names, numbers and facts in kubectl's words), never prose: the
templates translate it. Output is sorted so the same bundle gives the same views. The views
diagnose nothing: what is broken is what the rules' findings say, and the facts of GPU
discovery (GPU nodes, hypervisors, the controller's node selector) are the rules' own
(analyzer/rules/functions.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from k8s.printing import custom_columns, get_table
from k8s.quantity import QuantityError, quantity
from k8s.rows import pod_summary
from k8s.tensorfusion import TF_GROUP as TF
from k8s.times import parse_time
from k8s.types import BUILTIN_TYPES, InvalidCRD, ResourceType, crd_type

from ..bundle import Bundle, Coverage, ref
from ..i18n import missing_text
from ..results import Finding
from ..rules.functions import gpu_hints, gpu_node_selector, hypervisor_nodes, selects

TF_GET = ("tensorfusionclusters", "gpupools", "gpunodes", "gpus")
GPU_COLUMNS = (
    ("NAME", ".metadata.name"),
    ("MODEL", ".status.gpuModel"),
    ("PHASE", ".status.phase"),
    ("USED_BY", ".status.usedBy"),
    ("MODE", ".status.isolationMode"),
    ("ACTIVE_MODE", ".status.activeIsolationMode"),
    ("CAPACITY", ".status.capacity"),
    ("AVAILABLE", ".status.available"),
)
LINKS = ("node", "gpunode", "hypervisor", "gpus")
# The manual rows (or whole sections) whose findings say a link of the chain is broken: on the
# nodes a finding is about, or, for one about no node (the controller cannot create hypervisors,
# the CRDs are not installed), on every node where that link is not fine.
BREAKS = {
    "gpu-discovery/node-not-labelled": "node",
    "gpu-discovery/pool-selector-mismatch": "gpunode",
    "baseline/gpunode-not-running": "gpunode",
    "baseline/tf-not-installed": "gpunode",
    "baseline/hypervisor-missing": "hypervisor",
    "gpu-discovery/hypervisor-down": "hypervisor",
    "hypervisor-not-ready": "hypervisor",
    "gpu-discovery/no-devices": "gpus",
    "gpu-discovery/used-by-native": "gpus",
    "baseline/gpu-capacity-missing": "gpus",
}
LINK_STATES = ("ok", "waiting", "broken", "unknown")
LINK_REASONS = (
    "missing",
    "not_labelled",
    "not_ready",
    "not_running",
    "used_by_other",
    "not_collected",
)
MAX_WARNINGS = 500
# A kubectl view shows its first rows (kubectl's order); the total says how many there were.
MAX_TABLE_ROWS = 500
MESSAGE_CHARS = 1000


def build_views(bundle: Bundle, findings: Iterable[Finding]) -> dict[str, Any]:
    """The views of `bundle`, the discovery chain blaming what `findings` (its analysis's, in
    rank order) say is broken."""
    now = parse_time(bundle.manifest["created_at"])
    if now is None:  # the manifest schema makes this a date-time; be safe anyway
        now = datetime.fromtimestamp(0).astimezone()
    chains = discovery(bundle, now, findings)
    return {
        "kubectl": kubectl_views(bundle, now),
        "discovery": chains,
        "capacity": capacity(bundle, chains),
        "warnings": warning_events(bundle, now),
    }


# ------------------------------------------------------------------------------ kubectl
def _rtype(bundle: Bundle, resource: str, group: str) -> ResourceType:
    for crd in bundle.objects("customresourcedefinitions", group="apiextensions.k8s.io"):
        spec = crd.get("spec") or {}
        if spec.get("group") == group and (spec.get("names") or {}).get("plural") == resource:
            try:
                return crd_type(crd, bundle.source)
            except InvalidCRD:
                break
    for rtype in BUILTIN_TYPES:
        if rtype.key == (group, resource):
            return rtype
    # Without its CRD: what kubectl shows for a custom resource with no printer columns.
    art = next(
        (
            a
            for a in bundle.artifacts
            if a.get("resource") == resource and a.get("group", "") == group
        ),
        {},
    )
    kind = art.get("kind") or resource.rstrip("s").capitalize()
    return ResourceType(
        group, art.get("version", "v1"), resource, kind, bool(art.get("namespaced"))
    )


def _view(view_id: str, command: str) -> dict[str, Any]:
    return {"id": view_id, "command": command, "tables": [], "stderr": [], "not_collected": []}


def _not_collected(
    bundle: Bundle, view: dict[str, Any], resource: str, group: str, namespace: str | None = None
) -> bool:
    cov = bundle.coverage(resource, group=group, namespace=namespace)
    if cov.ok:
        return False
    if group == TF and bundle.manifest["tensorfusion"].get("installed") is False:
        singular = _rtype(bundle, resource, group).singular or resource.rstrip("s")
        view["stderr"].append(f'error: the server doesn\'t have a resource type "{singular}"')
    else:
        view["not_collected"].append(_facts(cov))
    return True


def kubectl_views(bundle: Bundle, now: datetime) -> list[dict[str, Any]]:
    ns = bundle.tf_namespace
    tf = _view("tf-resources", "kubectl get tensorfusioncluster,gpupool,gpunode,gpu")
    found = []
    for resource in TF_GET:
        if _not_collected(bundle, tf, resource, TF):
            continue
        items = bundle.objects(resource, group=TF)
        if items:
            found.append((_rtype(bundle, resource, TF), items))
    if tf["stderr"]:
        tf["stderr"] = tf["stderr"][:1]  # kubectl stops at the first unknown type
        found = []
    for rtype, items in found:
        table = get_table(rtype, items[:MAX_TABLE_ROWS], now=now, with_kind=len(found) > 1)
        tf["tables"].append({**table, "rows_total": len(items)})
    if not found and not tf["stderr"] and not tf["not_collected"]:
        tf["stderr"].append("No resources found")

    pods = _view("tf-pods", f"kubectl get pods -n {ns} -o wide")
    if not _not_collected(bundle, pods, "pods", "", ns):
        items = bundle.objects("pods", namespace=ns)
        if items:
            table = get_table(
                _rtype(bundle, "pods", ""), items[:MAX_TABLE_ROWS], now=now, wide=True
            )
            pods["tables"].append({**table, "rows_total": len(items)})
        else:
            pods["stderr"].append(f"No resources found in {ns} namespace.")

    spec = ",".join(f"{name}:{path}" for name, path in GPU_COLUMNS)
    gpus = _view("gpu-columns", f"kubectl get gpu -o custom-columns='{spec}'")
    if not _not_collected(bundle, gpus, "gpus", TF):
        items = bundle.objects("gpus", group=TF)
        if items:
            table = custom_columns(GPU_COLUMNS, items[:MAX_TABLE_ROWS])
            gpus["tables"].append(
                {"resource": "gpus.tensor-fusion.ai", **table, "rows_total": len(items)}
            )
        else:
            gpus["stderr"].append("No resources found")
    return [tf, pods, gpus]


# ------------------------------------------------------------------------------ discovery
def _link(kind: str, name: str | None, facts: str, reason: str | None = None) -> dict[str, Any]:
    """A link as the model shows it: `reason` says what is wrong in the facts' terms (None
    when nothing is); whether that makes it broken is the findings' word (`_judge`)."""
    return {
        "kind": kind,
        "state": "ok",
        "name": name,
        "facts": facts,
        "reason": reason,
        "finding": None,
    }


def _ready(obj: dict[str, Any]) -> str:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return str(cond.get("status"))
    return "Unknown"


def _unknown(
    bundle: Bundle, kind: str, resource: str, group: str = "", namespace: str | None = None
) -> dict[str, Any] | None:
    """The link when its data is not in the bundle: not collected, or missing when the API
    said the type does not exist (TensorFusion's CRDs not installed)."""
    cov = bundle.coverage(resource, group=group, namespace=namespace)
    if cov.ok:
        return None
    if cov.status == "not_found":
        return _link(kind, None, _facts(cov), "missing")
    return {**_link(kind, None, _facts(cov), "not_collected"), "state": "unknown"}


def _facts(cov: Coverage) -> str:
    # Facts in kubectl's and the API's words, in English like the rest of the views' data.
    assert cov.missing is not None
    return missing_text(cov.missing, "en")


def discovery(bundle: Bundle, now: datetime, findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """Per GPU node, its links read from the model; a link is broken where a finding says so
    (BREAKS), and waits where its facts are not fine but no finding blames it."""
    ns = bundle.tf_namespace
    nodes = {n["metadata"]["name"]: n for n in bundle.objects("nodes")}
    gpunodes = {g["metadata"]["name"]: g for g in bundle.objects("gpunodes", group=TF)}
    hypervisors: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for pod in bundle.objects("pods", namespace=ns, labels=f"{TF}/component=hypervisor"):
        for node in hypervisor_nodes(pod):
            hypervisors[node].append(pod)
    gpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for gpu in bundle.objects("gpus", group=TF):
        node = (gpu["metadata"].get("labels") or {}).get(f"{TF}/managed-by") or (
            (gpu.get("status") or {}).get("nodeSelector") or {}
        ).get("kubernetes.io/hostname")
        if node:
            gpus[node].append(gpu)
    names = {n for n, obj in nodes.items() if gpu_hints(obj)} | set(gpunodes) | set(hypervisors)
    names |= set(gpus)
    operators = bundle.objects("pods", namespace=ns, labels=f"{TF}/component=operator")
    selector = gpu_node_selector(operators)
    gaps = {
        "node": _unknown(bundle, "node", "nodes"),
        "gpunode": _unknown(bundle, "gpunode", "gpunodes", TF),
        "hypervisor": _unknown(bundle, "hypervisor", "pods", "", ns),
        "gpus": _unknown(bundle, "gpus", "gpus", TF),
    }
    blamed = _blamed(findings)
    chains = []
    for name in sorted(names):
        links = [
            gaps["node"] or _node_link(name, nodes.get(name), selector, name in gpunodes),
            gaps["gpunode"] or _gpunode_link(name, gpunodes.get(name)),
            gaps["hypervisor"] or _hypervisor_link(hypervisors.get(name, []), now),
            gaps["gpus"] or _gpus_link(gpus.get(name, [])),
        ]
        links = [_judge(link, name, blamed) for link in links]
        first = next((i for i, link in enumerate(links) if link["state"] == "broken"), None)
        chains.append({"node": name, "links": links, "first_broken": first})
    return chains


def _blamed(findings: Iterable[Finding]) -> list[tuple[str, frozenset[str], str]]:
    """(link kind, nodes, finding id) of each finding that says a link is broken, in rank
    order; no nodes for a finding about no node in particular."""
    blamed = []
    for f in findings:
        kind = next((BREAKS[k] for k in (*f.manual, f.section) if k in BREAKS), None)
        if kind is None:
            continue
        nodes = {ref.removeprefix("Node/") for ref in f.about if ref.startswith("Node/")}
        node = f.vars.get("node")
        if isinstance(node, str) and node not in ("", "?"):
            nodes.add(node)
        blamed.append((kind, frozenset(nodes), f.id))
    return blamed


def _judge(
    link: dict[str, Any], node: str, blamed: list[tuple[str, frozenset[str], str]]
) -> dict[str, Any]:
    """Broken where a finding about this node names the link, or one about no node in
    particular names it and its facts are not fine; waiting where its facts are not fine and
    no finding blames it (a consequence, or something no rule calls a fault)."""
    if link["state"] == "unknown":
        return link
    wrong = link["reason"] is not None
    finding = next(
        (
            fid
            for kind, nodes, fid in blamed
            if kind == link["kind"] and (node in nodes or (not nodes and wrong))
        ),
        None,
    )
    if finding is not None:
        return {**link, "state": "broken", "finding": finding}
    if wrong:
        return {**link, "state": "waiting", "reason": None}
    return link


def _node_link(
    name: str, node: dict[str, Any] | None, selector: str, has_gpunode: bool
) -> dict[str, Any]:
    if node is None:
        return _link("node", name, "no Node object", "missing")
    ready = _ready(node)
    facts = f"Ready={ready}"
    if not has_gpunode and not selects(selector, node):
        return _link("node", name, f"{facts}, not selected by -l {selector}", "not_labelled")
    if ready != "True":
        return _link("node", name, facts, "not_ready")
    return _link("node", name, facts)


def _gpunode_link(name: str, gpunode: dict[str, Any] | None) -> dict[str, Any]:
    if gpunode is None:
        return _link("gpunode", None, f"no GPUNode {name}", "missing")
    phase = (gpunode.get("status") or {}).get("phase") or "(none)"
    return _link("gpunode", name, f"phase={phase}", None if phase == "Running" else "not_running")


def _hypervisor_link(pods: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    if not pods:
        return _link("hypervisor", None, "no hypervisor pod", "missing")
    best = None
    for pod in pods:
        ready, status, restarts = pod_summary(pod, now)
        ok = (pod.get("status") or {}).get("phase") == "Running" and _ready(pod) == "True"
        facts = f"{ready} {status}, restarts {restarts}"
        candidate = _link("hypervisor", pod["metadata"]["name"], facts, None if ok else "not_ready")
        if best is None or (ok and best["reason"] is not None):
            best = candidate
    assert best is not None
    return best


def _gpus_link(items: list[dict[str, Any]]) -> dict[str, Any]:
    if not items:
        return _link("gpus", None, "no GPU objects", "missing")
    phases: dict[str, int] = defaultdict(int)
    other = 0
    for gpu in items:
        status = gpu.get("status") or {}
        phases[status.get("phase") or "(none)"] += 1
        if status.get("usedBy") not in (None, "", "tensor-fusion"):
            other += 1
    facts = ", ".join(f"{n} {p}" for p, n in sorted(phases.items()))
    if other:
        facts += f", {other} used by another device plugin"
    running = phases.get("Running", 0)
    if running < len(items):
        return _link("gpus", None, facts, "not_running")
    if other:
        return _link("gpus", None, facts, "used_by_other")
    return _link("gpus", None, facts)


# ------------------------------------------------------------------------------ capacity
def _amount(value: Any) -> int | float | None:
    if value in (None, ""):
        return None
    try:
        amount = quantity(value)
    except QuantityError:
        return None
    return int(amount) if amount.is_integer() else amount


def _measure(status: dict[str, Any], total: str, available: str) -> dict[str, Any]:
    return {
        "total": _amount(status.get(total)),
        "available": _amount(status.get(available)),
        "total_text": str(status.get(total) or ""),
        "available_text": str(status.get(available) or ""),
    }


def capacity(bundle: Bundle, chains: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pool, then every GPU node of the discovery chain (one without a GPUNode too). A
    node's numbers are `unknown` when its hypervisor, GPUNode or GPUs link is not ok (its
    hypervisor not up, no GPUNode, GPUs not all Running, or a finding says so): a GPUNode's
    status then still holds the last numbers it had, which would read as free capacity."""
    rows = [_capacity_row(obj, "GPUPool", None) for obj in bundle.objects("gpupools", group=TF)]
    gpunodes = {g["metadata"]["name"]: g for g in bundle.objects("gpunodes", group=TF)}
    for chain in chains:
        links = {link["kind"]: link for link in chain["links"]}
        unknown = next(
            (
                f"{kind}: {links[kind]['facts']}"
                for kind in ("hypervisor", "gpunode", "gpus")
                if links[kind]["state"] != "ok"
            ),
            None,
        )
        obj = gpunodes.get(chain["node"])
        if obj is None:
            obj = {"metadata": {"name": chain["node"]}, "kind": "GPUNode"}
        rows.append(_capacity_row(obj, "GPUNode", unknown))
    return rows


def _capacity_row(obj: dict[str, Any], kind: str, unknown: str | None) -> dict[str, Any]:
    status = obj.get("status") or {}
    return {
        "id": ref(obj),
        "kind": kind,
        "name": obj["metadata"]["name"],
        "phase": status.get("phase") or "",
        "tflops": _measure(status, "totalTFlops", "availableTFlops"),
        "vram": _measure(status, "totalVRAM", "availableVRAM"),
        "unknown": unknown,
    }


# ------------------------------------------------------------------------------ warnings
def _epoch(text: str) -> int | None:
    when = parse_time(text)
    return int(when.timestamp()) if when else None


def warning_events(bundle: Bundle, now: datetime) -> dict[str, Any]:
    """Warning events, oldest first (the newest MAX_WARNINGS when there are more), with the
    window of the timeline: from the first of them to the collection."""
    seen: list[dict[str, Any]] = []
    for occ in bundle.events():
        if occ.type != "Warning":
            continue
        message = occ.message
        if len(message) > MESSAGE_CHARS:
            message = message[:MESSAGE_CHARS] + "…"
        seen.append(
            {
                "id": ref(occ.event),
                "time": occ.last,
                "epoch": int(occ.at.timestamp()) if occ.at else None,
                "first_epoch": _epoch(occ.first),
                "reason": occ.reason,
                "object": "/".join(p for p in occ.regarding if p),
                "count": occ.count,
                "message": message,
            }
        )
    items = sorted(seen, key=lambda e: (e["epoch"] or 0, e["object"], e["reason"], e["id"]))
    total = len(items)
    items = items[-MAX_WARNINGS:]
    times = [t for e in items for t in (e["first_epoch"], e["epoch"]) if t is not None]
    start = min(times, default=None)
    end = max([*times, int(now.timestamp())]) if times else None
    return {"total": total, "start": start, "end": end, "events": items}
