"""Server-side printing: kubectl's pod STATUS rules, ages, printer columns, CRD JSONPaths."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from k8s.jsonpath import jsonpath_first
from k8s.rows import pod_summary
from k8s.tables import build_table
from k8s.times import human_duration
from k8s.types import BUILTIN_TYPES, ResourceType

NOW = datetime(2025, 3, 2, 12, 0, 0, tzinfo=timezone.utc)
TYPES = {t.key: t for t in BUILTIN_TYPES}


def _pod(
    containers: list[dict[str, Any]],
    *,
    init: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    spec_init: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A pod whose container statuses are given; spec containers follow from them."""
    spec_init = spec_init if spec_init is not None else [{"name": c["name"]} for c in init or []]
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2025-03-02T11:00:00Z"},
        "spec": {
            "containers": [{"name": c["name"]} for c in containers],
            "initContainers": spec_init,
        },
        "status": {
            "phase": phase,
            "containerStatuses": containers,
            "initContainerStatuses": init or [],
        },
    }
    for key, value in extra.items():
        if key == "deletionTimestamp":
            pod["metadata"][key] = value
        else:
            pod["status"][key] = value
    return pod


RUNNING = {"name": "c", "ready": True, "restartCount": 0, "state": {"running": {}}}


def _waiting(reason: str, name: str = "c", **kw: Any) -> dict[str, Any]:
    return {
        "name": name,
        "ready": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": reason}},
        **kw,
    }


def _terminated(reason: str = "", code: int = 0, name: str = "c", **kw: Any) -> dict[str, Any]:
    term = {"exitCode": code, **({"reason": reason} if reason else {})}
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": term}, **kw}


POD_CASES = [
    ("running", _pod([RUNNING]), ("1/1", "Running", "0")),
    (
        "crashloop",
        _pod(
            [
                _waiting(
                    "CrashLoopBackOff",
                    restartCount=3,
                    lastState={"terminated": {"exitCode": 1, "finishedAt": "2025-03-02T11:58:00Z"}},
                )
            ]
        ),
        ("0/1", "CrashLoopBackOff", "3 (2m ago)"),
    ),
    ("pending unscheduled", _pod([], phase="Pending"), ("0/0", "Pending", "0")),
    (
        "container creating",
        _pod([_waiting("ContainerCreating")], phase="Pending"),
        ("0/1", "ContainerCreating", "0"),
    ),
    (
        "image pull",
        _pod([_waiting("ImagePullBackOff")], phase="Pending"),
        ("0/1", "ImagePullBackOff", "0"),
    ),
    ("completed", _pod([_terminated("Completed")], phase="Succeeded"), ("0/1", "Completed", "0")),
    (
        "oom killed",
        _pod([_terminated("OOMKilled", 137)], phase="Failed"),
        ("0/1", "OOMKilled", "0"),
    ),
    (
        "exit code without reason",
        _pod([_terminated(code=2)], phase="Failed"),
        ("0/1", "ExitCode:2", "0"),
    ),
    (
        "signal",
        _pod([{**_terminated(code=0), "state": {"terminated": {"exitCode": 0, "signal": 9}}}]),
        ("0/1", "Signal:9", "0"),
    ),
    (
        "init waiting 0/2",
        _pod(
            [_waiting("PodInitializing")],
            phase="Pending",
            init=[_waiting("PodInitializing", "i1"), _waiting("PodInitializing", "i2")],
        ),
        ("0/1", "Init:0/2", "0"),
    ),
    (
        "init 1/2",
        _pod(
            [_waiting("PodInitializing")],
            phase="Pending",
            init=[_terminated("Completed", name="i1"), {"name": "i2", "state": {"running": {}}}],
        ),
        ("0/1", "Init:1/2", "0"),
    ),
    (
        "init image pull",
        _pod(
            [_waiting("PodInitializing")],
            phase="Pending",
            init=[_waiting("ImagePullBackOff", "i1")],
        ),
        ("0/1", "Init:ImagePullBackOff", "0"),
    ),
    (
        "init crashloop",
        _pod(
            [_waiting("PodInitializing")],
            phase="Pending",
            init=[_waiting("CrashLoopBackOff", "i1", restartCount=4)],
        ),
        ("0/1", "Init:CrashLoopBackOff", "4"),
    ),
    (
        "init failed",
        _pod(
            [_waiting("PodInitializing")],
            phase="Pending",
            init=[_terminated("Error", 1, name="i1")],
        ),
        ("0/1", "Init:Error", "0"),
    ),
    (
        "terminating",
        _pod([RUNNING], deletionTimestamp="2025-03-02T11:59:00Z"),
        ("1/1", "Terminating", "0"),
    ),
    (
        "node lost",
        _pod([RUNNING], deletionTimestamp="2025-03-02T11:59:00Z", reason="NodeLost"),
        ("1/1", "Unknown", "0"),
    ),
    ("evicted", _pod([], phase="Failed", reason="Evicted"), ("0/0", "Evicted", "0")),
    (
        "completed sidecar still running, not ready",
        _pod([_terminated("Completed", name="a"), RUNNING], phase="Running"),
        ("1/2", "NotReady", "0"),
    ),
    (
        "completed sidecar still running, ready",
        _pod(
            [_terminated("Completed", name="a"), RUNNING],
            phase="Running",
            conditions=[{"type": "Ready", "status": "True"}],
        ),
        ("1/2", "Running", "0"),
    ),
    (
        "restartable init container counts",
        _pod(
            [RUNNING],
            init=[
                {
                    "name": "side",
                    "started": True,
                    "ready": True,
                    "restartCount": 2,
                    "state": {"running": {}},
                }
            ],
            spec_init=[{"name": "side", "restartPolicy": "Always"}],
            conditions=[{"type": "Initialized", "status": "True"}],
        ),
        ("2/2", "Running", "2"),
    ),
    (
        "scheduling gated",
        _pod(
            [],
            phase="Pending",
            conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
        ),
        ("0/0", "SchedulingGated", "0"),
    ),
]


@pytest.mark.parametrize(
    ("pod", "expected"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES]
)
def test_pod_summary(pod: dict[str, Any], expected: tuple[str, str, str]) -> None:
    assert pod_summary(pod, NOW) == expected


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 5 * 60, "3h5m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (2 * 86400, "2d"),
        (2 * 86400 + 3 * 3600, "2d3h"),
        (30 * 86400, "30d"),
        (730 * 86400, "2y"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def _cells(key: tuple[str, str], obj: dict[str, Any]) -> dict[str, Any]:
    table = build_table(TYPES[key], [obj], now=NOW)
    names = [c["name"] for c in table["columnDefinitions"]]
    return dict(zip(names, table["rows"][0]["cells"], strict=True))


def test_pod_wide_cells() -> None:
    pod = _pod([RUNNING], podIP="10.0.0.9")
    pod["spec"]["nodeName"] = "n1"
    pod["spec"]["readinessGates"] = [{"conditionType": "x/ready"}]
    pod["status"]["conditions"] = [{"type": "x/ready", "status": "True"}]
    cells = _cells(("", "pods"), pod)
    assert cells == {
        "Name": "p",
        "Ready": "1/1",
        "Status": "Running",
        "Restarts": "0",
        "Age": "60m",
        "IP": "10.0.0.9",
        "Node": "n1",
        "Nominated Node": "<none>",
        "Readiness Gates": "1/1",
    }


def test_builtin_rows() -> None:
    node = {
        "metadata": {
            "name": "n",
            "labels": {"node-role.kubernetes.io/worker": "", "kubernetes.io/role": "gpu"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "Unknown"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.30.4"},
        },
    }
    cells = _cells(("", "nodes"), node)
    assert (cells["Status"], cells["Roles"], cells["Version"]) == (
        "NotReady,SchedulingDisabled",
        "gpu,worker",
        "v1.30.4",
    )
    assert (cells["Internal-IP"], cells["External-IP"], cells["OS-Image"]) == (
        "10.0.0.1",
        "<none>",
        "<unknown>",
    )

    deploy = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "spec": {
                    "containers": [{"name": "x", "image": "i:1"}, {"name": "y", "image": "j:2"}]
                }
            },
        },
        "status": {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1},
    }
    cells = _cells(("apps", "deployments"), deploy)
    assert [
        cells[k] for k in ("Ready", "Up-to-date", "Available", "Containers", "Images", "Selector")
    ] == ["1/2", 2, 1, "x,y", "i:1,j:2", "a=b"]

    job = {
        "metadata": {"name": "j"},
        "spec": {"completions": 3},
        "status": {
            "succeeded": 1,
            "startTime": "2025-03-02T11:00:00Z",
            "conditions": [{"type": "Failed", "status": "True"}],
        },
    }
    cells = _cells(("batch", "jobs"), job)
    assert (cells["Status"], cells["Completions"], cells["Duration"]) == ("Failed", "1/3", "60m")

    cj = {
        "metadata": {"name": "c"},
        "spec": {"schedule": "*/5 * * * *", "suspend": False},
        "status": {},
    }
    cells = _cells(("batch", "cronjobs"), cj)
    assert (cells["Timezone"], cells["Suspend"], cells["Active"], cells["Last Schedule"]) == (
        "<none>",
        "False",
        0,
        "<none>",
    )

    svc = {
        "metadata": {"name": "s"},
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.10",
            "ports": [{"port": 80, "nodePort": 30080}, {"port": 53, "protocol": "UDP"}],
            "selector": {"app": "x"},
        },
    }
    cells = _cells(("", "services"), svc)
    assert [cells[k] for k in ("Type", "Cluster-IP", "External-IP", "Port(s)", "Selector")] == [
        "NodePort",
        "10.96.0.10",
        "<none>",
        "80:30080/TCP,53/UDP",
        "app=x",
    ]

    quota = {
        "metadata": {"name": "q"},
        "status": {
            "hard": {"requests.cpu": "4", "limits.cpu": "8", "pods": "10"},
            "used": {"requests.cpu": "1"},
        },
    }
    cells = _cells(("", "resourcequotas"), quota)
    assert (cells["Request"], cells["Limit"]) == (
        "pods: 0/10, requests.cpu: 1/4",
        "limits.cpu: 0/8",
    )


def test_event_rows_for_both_groups() -> None:
    core = {
        "metadata": {"name": "e1"},
        "type": "Warning",
        "reason": "BackOff",
        "message": " boom \n",
        "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
        "source": {"component": "kubelet", "host": "n1"},
        "count": 4,
        "firstTimestamp": "2025-03-02T11:00:00Z",
        "lastTimestamp": "2025-03-02T11:55:00Z",
    }
    cells = _cells(("", "events"), core)
    assert [
        cells[k]
        for k in (
            "Last Seen",
            "Type",
            "Reason",
            "Object",
            "Subobject",
            "Source",
            "Message",
            "First Seen",
            "Count",
            "Name",
        )
    ] == [
        "5m",
        "Warning",
        "BackOff",
        "pod/p",
        "spec.containers{c}",
        "kubelet, n1",
        "boom",
        "60m",
        4,
        "e1",
    ]
    new = {
        "metadata": {"name": "e2"},
        "type": "Normal",
        "reason": "Scheduled",
        "note": "assigned",
        "regarding": {"kind": "Pod", "name": "p"},
        "reportingController": "default-scheduler",
        "eventTime": "2025-03-02T11:58:30.500000Z",
    }
    cells = _cells(("events.k8s.io", "events"), new)
    assert [cells[k] for k in ("Last Seen", "Object", "Source", "Message", "Count")] == [
        "89s",
        "pod/p",
        "default-scheduler",
        "assigned",
        1,
    ]


GPU_OBJ = {
    "metadata": {"name": "g", "creationTimestamp": "2025-03-01T12:00:00Z"},
    "status": {
        "phase": "Running",
        "capacity": {"tflops": "312", "vram": "80Gi"},
        "index": 3,
        "ratio": 0.5,
        "healthy": True,
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "Healthy", "status": "True"}],
        "nodeSelector": {"kubernetes.io/hostname": "n1"},
    },
}


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        (".status.phase", True, "Running"),
        ("{.status.phase}", True, "Running"),
        (".status.capacity.vram", True, "80Gi"),
        (".status.missing", False, None),
        (".status.conditions[0].type", True, "Ready"),
        (".status.conditions[-1].type", True, "Healthy"),
        (".status.conditions[5].type", False, None),
        ('.status.conditions[?(@.type=="Healthy")].status', True, "True"),
        (".status.conditions[?(@.type=='Nope')].status", False, None),
        (".status.nodeSelector['kubernetes.io/hostname']", True, "n1"),
        (".status.conditions[*].type", True, "Ready"),
        ("status.phase", False, None),  # not a JSONPath the API accepts
    ],
)
def test_jsonpath_first(path: str, found: bool, value: Any) -> None:
    assert jsonpath_first(GPU_OBJ, path) == (found, value)


def test_crd_printer_columns() -> None:
    columns = (
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Index", "type": "integer", "jsonPath": ".status.index"},
        {"name": "Ratio", "type": "number", "jsonPath": ".status.ratio"},
        {"name": "Healthy", "type": "boolean", "jsonPath": ".status.healthy"},
        {"name": "Capacity", "type": "string", "jsonPath": ".status.capacity", "priority": 1},
        {"name": "Missing", "type": "string", "jsonPath": ".status.nope"},
        {"name": "Wrong Type", "type": "integer", "jsonPath": ".status.phase"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    )
    rtype = ResourceType("tensor-fusion.ai", "v1", "gpus", "GPU", False, printer_columns=columns)
    table = build_table(rtype, [GPU_OBJ], now=NOW, include_object="Object")
    defs = table["columnDefinitions"]
    assert [c["name"] for c in defs] == ["Name", *(c["name"] for c in columns)]
    assert defs[5]["priority"] == 1
    assert table["rows"][0]["cells"] == [
        "g",
        "Running",
        3,
        0.5,
        True,
        '{"tflops":"312","vram":"80Gi"}',
        None,
        None,
        "24h",
    ]
    assert table["rows"][0]["object"] is GPU_OBJ


def test_crd_without_columns_gets_age_and_crds_get_created_at() -> None:
    rtype = ResourceType(
        "tensor-fusion.ai", "v1", "tensorfusionclusters", "TensorFusionCluster", False
    )
    table = build_table(rtype, [GPU_OBJ], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["g", "24h"]
    crds = build_table(
        TYPES[("apiextensions.k8s.io", "customresourcedefinitions")], [GPU_OBJ], now=NOW
    )
    assert [c["name"] for c in crds["columnDefinitions"]] == ["Name", "Created At"]
    assert crds["rows"][0]["cells"] == ["g", "2025-03-01T12:00:00Z"]
    assert crds["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": GPU_OBJ["metadata"],
    }


def test_every_builtin_type_prints_rows_of_its_width() -> None:
    # A near-empty object must print without errors, one cell per column, for every type.
    for rtype in BUILTIN_TYPES:
        table = build_table(rtype, [{"metadata": {"name": "x"}}], now=NOW)
        assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"]), rtype.key
