"""The API server's printers for built-in types (k8s.io/kubernetes/pkg/printers/internalversion):
each type's column definitions and the cells of one object's row. Like the server, every row
carries the wide (priority 1) cells and kubectl decides which to show."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .events import events_v1_to_core
from .selectors import SelectorError, format_labels, label_selector_from_dict
from .times import human_duration, parse_time, since

Obj = Mapping[str, Any]
Row = list[Any]
Printer = tuple[list[dict[str, Any]], Callable[[Obj, datetime], Row]]

NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


# --- helpers ---------------------------------------------------------------------------------


def get_in(obj: Any, *path: str, default: Any = None) -> Any:
    cur = obj
    for part in path:
        if not isinstance(cur, Mapping) or part not in cur:
            return default
        cur = cur[part]
    return default if cur is None else cur


def column_def(
    name: str, type_: str = "string", *, priority: int = 0, fmt: str = "", desc: str = ""
) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": desc, "priority": priority}


NAME = column_def("Name", fmt="name", desc=NAME_DOC)


def _containers(template_spec: Any) -> tuple[str, str]:
    containers = get_in(template_spec, "containers", default=[])
    return (
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    )


def _selector_string(selector: Any) -> str:
    try:
        return str(label_selector_from_dict(selector))
    except SelectorError:
        return "<invalid>"


# --- pods ------------------------------------------------------------------------------------


def _restartable(container: Obj | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"


def _condition_true(status: Obj, ctype: str) -> bool:
    return any(
        c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or []
    )


class _Restarts:
    """Restart count and the newest lastState.terminated.finishedAt seen."""

    def __init__(self) -> None:
        self.count = 0
        self.last: datetime | None = None

    def add(self, cs: Obj) -> None:
        self.count += int(cs.get("restartCount") or 0)
        finished = parse_time(get_in(cs, "lastState", "terminated", "finishedAt"))
        if finished and (self.last is None or finished > self.last):
            self.last = finished


def _init_reason(cs: Obj, index: int, total: int, spec: Obj | None) -> str | None:
    """The Init:... status of one init container, or None when it does not block."""
    state = cs.get("state") or {}
    term, waiting = state.get("terminated"), state.get("waiting")
    if term is not None and int(term.get("exitCode") or 0) == 0:
        return None
    if _restartable(spec) and cs.get("started"):
        return None
    if term is not None:
        if term.get("reason"):
            return "Init:" + term["reason"]
        if term.get("signal"):
            return f"Init:Signal:{term['signal']}"
        return f"Init:ExitCode:{term.get('exitCode', 0)}"
    if waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
        return "Init:" + waiting["reason"]
    return f"Init:{index}/{total}"


def pod_summary(pod: Obj, now: datetime) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) exactly as kubectl's printPod computes them."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = 0
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    all_restarts, sidecar_restarts = _Restarts(), _Restarts()
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        all_restarts.add(cs)
        cspec = init_specs.get(cs.get("name"))
        if _restartable(cspec):
            sidecar_restarts.add(cs)
            if cs.get("started") and cs.get("ready"):
                ready += 1
        init_reason = _init_reason(cs, i, len(init_specs), cspec)
        if init_reason is not None:
            reason, initializing = init_reason, True
            break

    restarts = all_restarts
    if not initializing or _condition_true(status, "Initialized"):
        restarts = sidecar_restarts
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts.add(cs)
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                sig = term.get("signal")
                reason = f"Signal:{sig}" if sig else f"ExitCode:{term.get('exitCode', 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"

    deleting = bool(get_in(pod, "metadata", "deletionTimestamp"))
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_str = str(restarts.count)
    if restarts.count and restarts.last is not None:
        ago = human_duration((now - restarts.last).total_seconds())
        restarts_str = f"{restarts.count} ({ago} ago)"
    return f"{ready}/{total}", reason, restarts_str


def _pod_row(pod: Obj, now: datetime) -> Row:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready, reason, restarts = pod_summary(pod, now)
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips else status.get("podIP")) or "<none>"
    gates = spec.get("readinessGates") or []
    gates_str = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in reversed(status.get("conditions") or [])}
        true = sum(1 for g in gates if conds.get(g.get("conditionType")) == "True")
        gates_str = f"{true}/{len(gates)}"
    return [
        get_in(pod, "metadata", "name"),
        ready,
        reason,
        restarts,
        since(get_in(pod, "metadata", "creationTimestamp"), now),
        ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_str,
    ]


def pod_conditions(pod: Obj) -> list[dict[str, str]] | None:
    phase = get_in(pod, "status", "phase")
    if phase == "Succeeded":
        msg = "The pod has completed successfully."
    elif phase == "Failed":
        msg = "The pod failed."
    else:
        return None
    return [{"type": "Completed", "status": "True", "reason": phase, "message": msg}]


# --- other built-ins -------------------------------------------------------------------------


def _node_row(node: Obj, now: datetime) -> Row:
    status = node.get("status") or {}
    ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    states = ["Ready" if c.get("status") == "True" else "NotReady" for c in ready[-1:]]
    states = states or ["Unknown"]
    if get_in(node, "spec", "unschedulable"):
        states.append("SchedulingDisabled")
    labels = get_in(node, "metadata", "labels", default={})
    roles = set()
    for key, value in labels.items():
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]:
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        for addr in status.get("addresses") or []:
            if addr.get("type") == kind:
                return addr.get("address", "")
        return "<none>"

    return [
        get_in(node, "metadata", "name"),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        since(get_in(node, "metadata", "creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _event_row(ev: Obj, now: datetime) -> Row:
    """printEvent over a core/v1 Event (events.k8s.io ones are converted first)."""
    first = since(ev.get("firstTimestamp"), now)
    if not ev.get("firstTimestamp"):
        first = since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 1
    if ev.get("series"):
        last = since(ev["series"].get("lastObservedTime"), now)
        count = ev["series"].get("count") or count
    ref = ev.get("involvedObject") or {}
    kind = str(ref.get("kind", "")).lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    host = source.get("host") or ev.get("reportingInstance") or ""
    return [
        last,
        ev.get("type", ""),
        ev.get("reason", ""),
        target,
        ref.get("fieldPath", ""),
        f"{component}, {host}" if host else component,
        str(ev.get("message", "")).strip(),
        first,
        int(count),
        get_in(ev, "metadata", "name"),
    ]


def _deployment_row(d: Obj, now: datetime) -> Row:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    names, images = _containers(get_in(spec, "template", "spec"))
    return [
        get_in(d, "metadata", "name"),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        int(status.get("updatedReplicas", 0)),
        int(status.get("availableReplicas", 0)),
        since(get_in(d, "metadata", "creationTimestamp"), now),
        names,
        images,
        _selector_string(spec.get("selector")),
    ]


def _replicaset_row(rs: Obj, now: datetime) -> Row:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    names, images = _containers(get_in(spec, "template", "spec"))
    return [
        get_in(rs, "metadata", "name"),
        int(spec.get("replicas", 1)),
        int(status.get("replicas", 0)),
        int(status.get("readyReplicas", 0)),
        since(get_in(rs, "metadata", "creationTimestamp"), now),
        names,
        images,
        _selector_string(spec.get("selector")),
    ]


def _statefulset_row(sts: Obj, now: datetime) -> Row:
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    names, images = _containers(get_in(spec, "template", "spec"))
    return [
        get_in(sts, "metadata", "name"),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        since(get_in(sts, "metadata", "creationTimestamp"), now),
        names,
        images,
    ]


def _daemonset_row(ds: Obj, now: datetime) -> Row:
    spec, status = ds.get("spec") or {}, ds.get("status") or {}
    names, images = _containers(get_in(spec, "template", "spec"))
    return [
        get_in(ds, "metadata", "name"),
        int(status.get("desiredNumberScheduled", 0)),
        int(status.get("currentNumberScheduled", 0)),
        int(status.get("numberReady", 0)),
        int(status.get("updatedNumberScheduled", 0)),
        int(status.get("numberAvailable", 0)),
        format_labels(get_in(spec, "template", "spec", "nodeSelector")),
        since(get_in(ds, "metadata", "creationTimestamp"), now),
        names,
        images,
        _selector_string(spec.get("selector")),
    ]


def _job_status(job: Obj) -> str:
    conds = {c.get("type"): c.get("status") for c in get_in(job, "status", "conditions", default=[])}
    if conds.get("Complete") == "True":
        return "Complete"
    if conds.get("Failed") == "True":
        return "Failed"
    if get_in(job, "metadata", "deletionTimestamp"):
        return "Terminating"
    if conds.get("Suspended") == "True":
        return "Suspended"
    if conds.get("FailureTarget") == "True":
        return "FailureTarget"
    return "Running"


def _job_row(job: Obj, now: datetime) -> Row:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    succeeded = status.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif int(spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = ""
    if start is not None:
        duration = human_duration(((end or now) - start).total_seconds())
    names, images = _containers(get_in(spec, "template", "spec"))
    return [
        get_in(job, "metadata", "name"),
        _job_status(job),
        completions,
        duration,
        since(get_in(job, "metadata", "creationTimestamp"), now),
        names,
        images,
        _selector_string(spec.get("selector")),
    ]


def _cronjob_row(cj: Obj, now: datetime) -> Row:
    spec, status = cj.get("spec") or {}, cj.get("status") or {}
    job_spec = get_in(spec, "jobTemplate", "spec", default={})
    names, images = _containers(get_in(job_spec, "template", "spec"))
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    return [
        get_in(cj, "metadata", "name"),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(status.get("active") or []),
        since(last, now) if last else "<none>",
        since(get_in(cj, "metadata", "creationTimestamp"), now),
        names,
        images,
        _selector_string(job_spec.get("selector")),
    ]


def _service_external_ip(svc: Obj) -> str:
    spec = svc.get("spec") or {}
    external = spec.get("externalIPs") or []
    stype = spec.get("type", "ClusterIP")
    if stype in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if stype == "LoadBalancer":
        ingress = get_in(svc, "status", "loadBalancer", "ingress", default=[])
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress} - {None, ""})
        return ",".join(lb + external) or "<pending>"
    if stype == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def _service_row(svc: Obj, now: datetime) -> Row:
    spec = svc.get("spec") or {}
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = []
    for p in spec.get("ports") or []:
        proto = p.get("protocol", "TCP")
        node = p.get("nodePort")
        ports.append(f"{p.get('port')}:{node}/{proto}" if node else f"{p.get('port')}/{proto}")
    return [
        get_in(svc, "metadata", "name"),
        spec.get("type", "ClusterIP"),
        ips[0] if ips else "<none>",
        _service_external_ip(svc),
        ",".join(ports) or "<none>",
        since(get_in(svc, "metadata", "creationTimestamp"), now),
        format_labels(spec.get("selector")),
    ]


_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Any) -> str:
    return ",".join(short for long, short in _ACCESS_MODES if long in (modes or []))


def _pvc_row(pvc: Obj, now: datetime) -> Row:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    phase = "Terminating" if get_in(pvc, "metadata", "deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        capacity = str(get_in(status, "capacity", "storage", default=""))
        modes = _access_modes(status.get("accessModes"))
    sc = get_in(pvc, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    return [
        get_in(pvc, "metadata", "name"),
        phase,
        spec.get("volumeName", ""),
        capacity,
        modes,
        sc or spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        since(get_in(pvc, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "<unset>",
    ]


def _pv_row(pv: Obj, now: datetime) -> Row:
    spec, status = pv.get("spec") or {}, pv.get("status") or {}
    claim = spec.get("claimRef")
    sc = get_in(pv, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    phase = "Terminating" if get_in(pv, "metadata", "deletionTimestamp") else status.get("phase", "")
    return [
        get_in(pv, "metadata", "name"),
        str(get_in(spec, "capacity", "storage", default="0")),
        _access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        phase,
        f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "",
        sc or spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason", ""),
        since(get_in(pv, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "<unset>",
    ]


def _quota_row(rq: Obj, now: datetime) -> Row:
    hard = get_in(rq, "status", "hard", default={})
    used = get_in(rq, "status", "used", default={})
    requests, limits = [], []
    for name in sorted(hard):
        column = limits if name.split(".")[0] == "limits" and "." in name else requests
        column.append(f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [
        get_in(rq, "metadata", "name"),
        ", ".join(requests),
        ", ".join(limits),
        since(get_in(rq, "metadata", "creationTimestamp"), now),
    ]


def _storageclass_row(sc: Obj, now: datetime) -> Row:
    ann = get_in(sc, "metadata", "annotations", default={})
    default = any(
        ann.get(k) == "true"
        for k in (
            "storageclass.kubernetes.io/is-default-class",
            "storageclass.beta.kubernetes.io/is-default-class",
        )
    )
    return [
        get_in(sc, "metadata", "name") + (" (default)" if default else ""),
        sc.get("provisioner", ""),
        sc.get("reclaimPolicy") or "Delete",
        sc.get("volumeBindingMode") or "Immediate",
        bool(sc.get("allowVolumeExpansion", False)),
        since(get_in(sc, "metadata", "creationTimestamp"), now),
    ]


def _simple(*cells: Callable[[Obj], Any]) -> Callable[[Obj, datetime], Row]:
    """A row of NAME, the given cells, then AGE."""

    def row(obj: Obj, now: datetime) -> Row:
        values = [fn(obj) for fn in cells]
        return [
            get_in(obj, "metadata", "name"),
            *values,
            since(get_in(obj, "metadata", "creationTimestamp"), now),
        ]

    return row


def columns(spec: str) -> list[dict[str, Any]]:
    """Column definitions from a compact spec: "Name|Ready|Desired#integer|+IP".

    A leading "+" marks a wide-only (priority 1) column; "#type" sets the type (default string).
    """
    out = []
    for item in spec.split("|"):
        priority = 1 if item.startswith("+") else 0
        name, _, type_ = item.lstrip("+").partition("#")
        desc = {"Name": NAME_DOC, "Age": AGE_DOC}.get(name, "")
        out.append(column_def(name, type_ or "string", priority=priority,
                        fmt="name" if name == "Name" else "", desc=desc))  # fmt: skip
    return out


_WIDE_TEMPLATE = "+Containers|+Images|+Selector"

# (group, resource) -> (columns, row function), as the API server's printers define them.
PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "pods"): (
        columns("Name|Ready|Status|Restarts|Age|+IP|+Node|+Nominated Node|+Readiness Gates"),
        _pod_row,
    ),
    ("", "nodes"): (
        columns(
            "Name|Status|Roles|Age|Version|+Internal-IP|+External-IP|+OS-Image"
            "|+Kernel-Version|+Container-Runtime"
        ),
        _node_row,
    ),
    ("", "events"): (
        columns("Last Seen|Type|Reason|Object|+Subobject|+Source|Message|+First Seen|+Count|+Name"),
        _event_row,
    ),
    ("", "namespaces"): (
        columns("Name|Status|Age"),
        _simple(lambda o: get_in(o, "status", "phase", default="")),
    ),
    ("", "configmaps"): (
        columns("Name|Data|Age"),
        _simple(lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
    ),
    ("", "secrets"): (
        columns("Name|Type|Data|Age"),
        _simple(lambda o: o.get("type", ""), lambda o: len(o.get("data") or {})),
    ),
    ("", "serviceaccounts"): (
        columns("Name|Secrets|Age"),
        _simple(lambda o: len(o.get("secrets") or [])),
    ),
    ("", "services"): (
        columns("Name|Type|Cluster-IP|External-IP|Port(s)|Age|+Selector"),
        _service_row,
    ),
    ("", "persistentvolumeclaims"): (
        columns(
            "Name|Status|Volume|Capacity|Access Modes|StorageClass|VolumeAttributesClass|Age"
            "|+VolumeMode"
        ),
        _pvc_row,
    ),
    ("", "persistentvolumes"): (
        columns(
            "Name|Capacity|Access Modes|Reclaim Policy|Status|Claim|StorageClass"
            "|VolumeAttributesClass|Reason|Age|+VolumeMode"
        ),
        _pv_row,
    ),
    ("", "resourcequotas"): (columns("Name|Request|Limit|Age"), _quota_row),
    ("apps", "deployments"): (
        columns(f"Name|Ready|Up-to-date|Available|Age|{_WIDE_TEMPLATE}"),
        _deployment_row,
    ),
    ("apps", "replicasets"): (
        columns(f"Name|Desired#integer|Current#integer|Ready#integer|Age|{_WIDE_TEMPLATE}"),
        _replicaset_row,
    ),
    ("apps", "statefulsets"): (columns("Name|Ready|Age|+Containers|+Images"), _statefulset_row),
    ("apps", "daemonsets"): (
        columns(
            "Name|Desired#integer|Current#integer|Ready#integer|Up-to-date#integer"
            f"|Available#integer|Node Selector|Age|{_WIDE_TEMPLATE}"
        ),
        _daemonset_row,
    ),
    ("batch", "jobs"): (
        columns(f"Name|Status|Completions|Duration|Age|{_WIDE_TEMPLATE}"),
        _job_row,
    ),
    ("batch", "cronjobs"): (
        columns(
            "Name|Schedule|Timezone|Suspend#boolean|Active#integer|Last Schedule|Age"
            f"|{_WIDE_TEMPLATE}"
        ),
        _cronjob_row,
    ),
    ("coordination.k8s.io", "leases"): (
        columns("Name|Holder|Age"),
        _simple(lambda o: get_in(o, "spec", "holderIdentity", default="")),
    ),
    ("scheduling.k8s.io", "priorityclasses"): (
        columns("Name|Value#integer|Global-Default#boolean|Age|PreemptionPolicy"),
        lambda o, now: [
            get_in(o, "metadata", "name"),
            int(o.get("value", 0)),
            bool(o.get("globalDefault", False)),
            since(get_in(o, "metadata", "creationTimestamp"), now),
            o.get("preemptionPolicy", ""),
        ],
    ),
    ("storage.k8s.io", "storageclasses"): (
        columns("Name|Provisioner|ReclaimPolicy|VolumeBindingMode|AllowVolumeExpansion|Age"),
        _storageclass_row,
    ),
    ("node.k8s.io", "runtimeclasses"): (
        columns("Name|Handler|Age"),
        _simple(lambda o: o.get("handler", "")),
    ),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): (
        columns("Name|Webhooks#integer|Age"),
        _simple(lambda o: len(o.get("webhooks") or [])),
    ),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): (
        columns("Name|Webhooks#integer|Age"),
        _simple(lambda o: len(o.get("webhooks") or [])),
    ),
}

# events.k8s.io/v1 Events print like core ones (the API has one printer for both).
PRINTERS[("events.k8s.io", "events")] = (
    PRINTERS[("", "events")][0],
    lambda ev, now: _event_row(events_v1_to_core(ev), now),
)


