"""The real `kubernetes` Python client against the emulator; fault injection; raw HTTP."""

from __future__ import annotations

import copy
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import FaultyEmulator
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from emulator.cluster import ClusterData, LogKey
from emulator.server import Emulator

CONTROLLER_POD = "tensor-fusion-sys-controller-6d8f9c7b5d-x7k2p"
TFS = "tensor-fusion-sys"


@pytest.fixture(scope="module")
def api_client(kubeconfig: Path) -> client.ApiClient:
    # A private Configuration: the global default one belongs to nobody in a test run.
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    cfg.retries = 0
    return client.ApiClient(cfg)


@pytest.fixture(scope="module")
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def _status(exc: ApiException) -> dict[str, Any]:
    return json.loads(exc.body)


def _raw(
    emu: Emulator,
    path: str,
    accept: str = "application/json",
    method: str = "GET",
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request(method, path, body=body, headers={"Accept": accept})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


# --- the kubernetes client -------------------------------------------------------------------


def test_list_pods_with_selectors(core: client.CoreV1Api) -> None:
    pods = core.list_namespaced_pod(TFS, label_selector="tensor-fusion.ai/component=operator")
    assert [p.metadata.name for p in pods.items] == [CONTROLLER_POD]
    assert pods.kind == "PodList" and pods.metadata.resource_version.isdigit()
    running = core.list_namespaced_pod(
        TFS, field_selector="status.phase=Running,spec.nodeName=gpu-node-1"
    )
    assert [p.metadata.name for p in running.items] == ["hypervisor-gpu-node-1"]
    everywhere = core.list_pod_for_all_namespaces(
        field_selector="spec.schedulerName=tensor-fusion-scheduler"
    )
    assert {p.metadata.name for p in everywhere.items} == {
        "llm-inference-7d9f8b6c4-abcde",
        "train-job-0",
    }


def test_read_pod_and_events(core: client.CoreV1Api) -> None:
    pod = core.read_namespaced_pod(CONTROLLER_POD, TFS)
    assert pod.status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    events = core.list_namespaced_event(
        TFS,
        field_selector=f"involvedObject.name={CONTROLLER_POD},involvedObject.uid={pod.metadata.uid}",
    )
    assert [e.reason for e in events.items] == ["BackOff"]


def test_read_pod_log_previous_and_tail(core: client.CoreV1Api) -> None:
    prev = core.read_namespaced_pod_log(
        CONTROLLER_POD, TFS, container="controller", previous=True, tail_lines=1
    )
    assert (
        prev
        == "2025-03-01T09:00:05Z ERROR setup unable to start manager: failed to wait for webhook certificate\n"
    )
    current = core.read_namespaced_pod_log(
        CONTROLLER_POD, TFS, container="controller", tail_lines=2
    )
    assert current.splitlines() == [
        "2025-03-01T09:00:07Z INFO controller line 7",
        "2025-03-01T09:00:08Z INFO controller line 8",
    ]
    head = core.read_namespaced_pod_log(CONTROLLER_POD, TFS, container="controller", limit_bytes=10)
    assert head == "2025-03-01"


def test_pod_log_errors(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log(CONTROLLER_POD, TFS)
    assert exc.value.status == 400
    assert _status(exc.value)["message"] == (
        f"a container name must be specified for pod {CONTROLLER_POD}, choose one of: [controller vector]"
    )
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log(
            "hypervisor-gpu-node-1", TFS, container="vector", previous=True
        )
    assert _status(exc.value)["message"] == (
        'previous terminated container "vector" in pod "hypervisor-gpu-node-1" not found'
    )
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("nope", TFS)
    assert exc.value.status == 404
    assert _status(exc.value)["details"] == {"name": "nope", "kind": "pods"}
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log(CONTROLLER_POD, TFS, container="sidecar")
    assert (
        _status(exc.value)["message"] == f"container sidecar is not valid for pod {CONTROLLER_POD}"
    )


def test_list_custom_objects(api_client: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(api_client)
    gpus = custom.list_cluster_custom_object("tensor-fusion.ai", "v1", "gpus")
    assert gpus["kind"] == "GPUList" and gpus["apiVersion"] == "tensor-fusion.ai/v1"
    assert [g["metadata"]["name"] for g in gpus["items"]] == ["gpu-1f9a6c52", "gpu-8c3d0e77"]
    one = custom.get_cluster_custom_object("tensor-fusion.ai", "v1", "gpus", "gpu-8c3d0e77")
    assert one["status"]["usedBy"] == "nvidia-device-plugin"
    with pytest.raises(ApiException) as exc:
        custom.get_cluster_custom_object("tensor-fusion.ai", "v1", "gpus", "gpu-missing")
    assert _status(exc.value)["message"] == 'gpus.tensor-fusion.ai "gpu-missing" not found'
    assert _status(exc.value)["details"] == {
        "name": "gpu-missing",
        "group": "tensor-fusion.ai",
        "kind": "gpus",
    }


def test_write_verbs_are_refused(core: client.CoreV1Api) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}}
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_pod("default", pod)
    assert exc.value.status == 405
    assert _status(exc.value)["reason"] == "MethodNotAllowed"
    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_pod(CONTROLLER_POD, TFS)
    assert exc.value.status == 405


def test_secrets_are_listed_but_never_served(core: client.CoreV1Api) -> None:
    assert core.list_secret_for_all_namespaces().items == []
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_secret("anything", TFS)
    assert exc.value.status == 404


def test_only_helm_release_secrets_are_ever_served(tf_data: ClusterData) -> None:
    data = copy.deepcopy(tf_data)
    for name, kind in (("sh.helm.release.v1.tf.v1", "helm.sh/release.v1"), ("db", "Opaque")):
        meta = {"name": name, "namespace": TFS, "labels": {"owner": "helm", "name": "tf"}}
        data.add_object(
            {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": kind, "data": {}}
        )
    with Emulator(data) as emu:
        core = client.CoreV1Api(client.ApiClient(client.Configuration(host=emu.url)))
        listed = core.list_namespaced_secret(TFS, label_selector="owner=helm").items
        assert [s.metadata.name for s in listed] == ["sh.helm.release.v1.tf.v1"]
        with pytest.raises(ApiException) as exc:
            core.read_namespaced_secret("db", TFS)
        assert exc.value.status == 404


def test_access_review(api_client: client.ApiClient, emulator: FaultyEmulator) -> None:
    auth = client.AuthorizationV1Api(api_client)

    def allowed(verb: str, resource: str, group: str = "") -> bool:
        attrs = client.V1ResourceAttributes(verb=verb, resource=resource, group=group)
        review = client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs)
        )
        return auth.create_self_subject_access_review(review).status.allowed

    assert allowed("list", "pods")
    emulator.faults.add(resource="pods", verb="list", status=403)
    assert not allowed("list", "pods")
    assert allowed("get", "pods")


# --- pagination ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def many_pods() -> Iterator[tuple[Emulator, client.CoreV1Api]]:
    data = ClusterData()
    data.add_builtin_types()
    for i in range(25):
        data.add_object(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"worker-{i:02d}",
                    "namespace": "ml",
                    "resourceVersion": str(100 + i),
                    "labels": {"parity": "even" if i % 2 == 0 else "odd"},
                },
                "spec": {"containers": [{"name": "main"}]},
            }
        )
    data.logs[LogKey("ml", "worker-00", "main")] = "only line"
    with Emulator(data) as emu:
        cfg = client.Configuration(host=emu.url)
        yield emu, client.CoreV1Api(client.ApiClient(cfg))


def test_pagination_with_continue(many_pods: tuple[Emulator, client.CoreV1Api]) -> None:
    _, core = many_pods
    names, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_pod("ml", limit=10, _continue=token, label_selector="parity")
        pages += 1
        names += [p.metadata.name for p in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 25 - len(names)
    assert pages == 3
    assert names == [f"worker-{i:02d}" for i in range(25)]
    even = core.list_namespaced_pod("ml", limit=5, label_selector="parity=even")
    assert len(even.items) == 5 and even.metadata.remaining_item_count == 8


def test_bad_and_expired_continue(many_pods: tuple[Emulator, client.CoreV1Api]) -> None:
    emu, core = many_pods
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_pod("ml", limit=10, _continue="not-a-token")
    assert exc.value.status == 400
    assert _status(exc.value)["message"].startswith("continue key is not valid")
    token = core.list_namespaced_pod("ml", limit=10).metadata._continue
    pod = emu.data.objects[("", "pods")][0]
    changed = {**pod, "metadata": {**pod["metadata"], "resourceVersion": "999"}}
    emu.data.add_object(changed)  # the list changed since the first page
    try:
        with pytest.raises(ApiException) as exc:
            core.list_namespaced_pod("ml", limit=10, _continue=token)
        assert exc.value.status == 410
        assert _status(exc.value)["reason"] == "Expired"
    finally:
        emu.data.add_object(pod)


def test_log_of_single_container_pod_needs_no_container(
    many_pods: tuple[Emulator, client.CoreV1Api],
) -> None:
    _, core = many_pods
    assert core.read_namespaced_pod_log("worker-00", "ml") == "only line\n"
    assert core.read_namespaced_pod_log("worker-01", "ml") == ""


# --- faults ----------------------------------------------------------------------------------


def test_forbidden_fault(api_client: client.ApiClient, emulator: FaultyEmulator) -> None:
    emulator.faults.add(resource="gpus", verb="list", status=403)
    custom = client.CustomObjectsApi(api_client)
    with pytest.raises(ApiException) as exc:
        custom.list_cluster_custom_object("tensor-fusion.ai", "v1", "gpus")
    assert exc.value.status == 403
    status = _status(exc.value)
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'gpus.tensor-fusion.ai is forbidden: User "system:serviceaccount:default:tf-support" '
        'cannot list resource "gpus" in API group "tensor-fusion.ai" at the cluster scope'
    )
    # get is another verb: not covered by this fault
    assert custom.get_cluster_custom_object("tensor-fusion.ai", "v1", "gpus", "gpu-8c3d0e77")


def test_forbidden_messages_for_namespaced_get_and_log(
    core: client.CoreV1Api, emulator: FaultyEmulator
) -> None:
    emulator.faults.add(resource="pods", verb="log", namespace=TFS, status=403)
    emulator.faults.add(resource="pods", verb="get", name=CONTROLLER_POD, status=403)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log(CONTROLLER_POD, TFS, container="controller")
    assert _status(exc.value)["message"] == (
        f'pods "{CONTROLLER_POD}" is forbidden: User "system:serviceaccount:default:tf-support" '
        f'cannot get resource "pods/log" in API group "" in the namespace "{TFS}"'
    )
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod(CONTROLLER_POD, TFS)
    assert (
        'cannot get resource "pods" in API group "" in the namespace'
        in _status(exc.value)["message"]
    )
    assert core.read_namespaced_pod("hypervisor-gpu-node-1", TFS)  # other names pass


def test_too_many_requests_with_retry_after(
    core: client.CoreV1Api, emulator: FaultyEmulator
) -> None:
    emulator.faults.add(resource="pods", verb="list", status=429, retry_after=7)
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_pod(TFS)
    assert exc.value.status == 429
    assert exc.value.headers["Retry-After"] == "7"
    status = _status(exc.value)
    assert status["reason"] == "TooManyRequests"
    assert status["details"]["retryAfterSeconds"] == 7


def test_count_limits_a_fault_to_the_first_calls(
    core: client.CoreV1Api, emulator: FaultyEmulator
) -> None:
    fault = emulator.faults.add(resource="pods", verb="list", status=500, count=1)
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_pod(TFS)
    assert exc.value.status == 500
    assert _status(exc.value)["reason"] == "InternalError"
    assert len(core.list_namespaced_pod(TFS).items) == 3
    assert fault.hits == 1


@pytest.mark.parametrize(
    ("code", "reason"), [(404, "NotFound"), (503, "ServiceUnavailable"), (504, "Timeout")]
)
def test_other_fault_codes(
    core: client.CoreV1Api, emulator: FaultyEmulator, code: int, reason: str
) -> None:
    emulator.faults.add(resource="pods", verb="get", status=code, count=1)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod(CONTROLLER_POD, TFS)
    assert (exc.value.status, _status(exc.value)["reason"]) == (code, reason)


def test_latency(core: client.CoreV1Api, emulator: FaultyEmulator) -> None:
    core.list_namespaced_pod(TFS)  # warm the connection
    started = time.monotonic()
    core.list_namespaced_pod(TFS)
    fast = time.monotonic() - started
    emulator.faults.latency = 0.15
    started = time.monotonic()
    core.list_namespaced_pod(TFS)
    assert time.monotonic() - started >= 0.15 > fast
    emulator.faults.latency = 0.0
    emulator.faults.add(resource="pods", verb="get", latency=0.2, count=1)
    started = time.monotonic()
    core.read_namespaced_pod(CONTROLLER_POD, TFS)  # slow, but answered
    assert time.monotonic() - started >= 0.2


def test_hang_fault_times_out_the_client(emulator: FaultyEmulator) -> None:
    emulator.faults.add(resource="pods", verb="list", hang=True, count=1)
    conn = http.client.HTTPConnection(emulator.host, emulator.port, timeout=0.3)
    conn.request("GET", f"/api/v1/namespaces/{TFS}/pods")
    with pytest.raises(socket.timeout):
        conn.getresponse()
    conn.close()
    assert _raw(emulator, f"/api/v1/namespaces/{TFS}/pods")[0] == 200


def test_requests_counter_is_thread_safe(emulator: Emulator) -> None:
    before = emulator.requests
    threads = [threading.Thread(target=_raw, args=(emulator, "/version")) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert emulator.requests - before == 20


# --- raw HTTP: discovery, tables, errors -----------------------------------------------------


def test_plain_discovery(emulator: Emulator) -> None:
    code, _, body = _raw(emulator, "/api")
    assert code == 200 and json.loads(body)["versions"] == ["v1"]
    groups = json.loads(_raw(emulator, "/apis")[2])
    names = [g["name"] for g in groups["groups"]]
    assert names[0] == "apps" and names[-1] == "tensor-fusion.ai"
    group = json.loads(_raw(emulator, "/apis/tensor-fusion.ai")[2])
    assert group["preferredVersion"] == {"groupVersion": "tensor-fusion.ai/v1", "version": "v1"}
    core = json.loads(_raw(emulator, "/api/v1")[2])
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods == {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get", "list"],
        "shortNames": ["po"],
        "categories": ["all"],
    }
    assert {
        "name": "pods/log",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get"],
    } in core["resources"]
    tf = json.loads(_raw(emulator, "/apis/tensor-fusion.ai/v1")[2])
    gpus = next(r for r in tf["resources"] if r["name"] == "gpus")
    assert (gpus["namespaced"], gpus["kind"], gpus["singularName"]) == (False, "GPU", "gpu")
    assert _raw(emulator, "/apis/nope.example.com/v1")[0] == 404


def test_aggregated_discovery(emulator: Emulator) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    _, headers, body = _raw(emulator, "/apis", accept)
    assert (
        headers["Content-Type"]
        == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
    doc = json.loads(body)
    assert doc["kind"] == "APIGroupDiscoveryList"
    tf = next(i for i in doc["items"] if i["metadata"].get("name") == "tensor-fusion.ai")
    gpus = next(r for r in tf["versions"][0]["resources"] if r["resource"] == "gpus")
    assert gpus["scope"] == "Cluster"
    assert gpus["responseKind"] == {"group": "tensor-fusion.ai", "version": "v1", "kind": "GPU"}


def test_table_output(emulator: Emulator) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    table = json.loads(_raw(emulator, f"/api/v1/namespaces/{TFS}/pods", accept)[2])
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]][:5] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]
    row = table["rows"][0]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == TFS
    done = next(r for r in table["rows"] if r["cells"][0] == "node-discovery-gpu-node-1")
    assert done["conditions"][0]["reason"] == "Succeeded"
    full = json.loads(
        _raw(emulator, "/apis/tensor-fusion.ai/v1/gpus/gpu-1f9a6c52?includeObject=Object", accept)[
            2
        ]
    )
    assert full["rows"][0]["object"]["status"]["gpuModel"] == "A100_SXM_80G"
    assert full["rows"][0]["cells"][:3] == ["gpu-1f9a6c52", "A100_SXM_80G", "Running"]
    bare = json.loads(_raw(emulator, "/api/v1/nodes?includeObject=None", accept)[2])
    assert "object" not in bare["rows"][0]
    partial = json.loads(
        _raw(
            emulator,
            "/api/v1/nodes",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )[2]
    )
    assert partial["kind"] == "PartialObjectMetadataList" and "status" not in partial["items"][0]


def test_events_are_served_in_both_groups(emulator: Emulator) -> None:
    new = json.loads(
        _raw(
            emulator,
            "/apis/events.k8s.io/v1/namespaces/ml/events?fieldSelector=regarding.name=train-job-0",
        )[2]
    )
    assert [e["note"][:4] for e in new["items"]] == ["0/2 "]
    assert new["items"][0]["regarding"]["kind"] == "Pod"


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        ("/api/v1/namespaces/ml/nodes", 404, "the server could not find the requested resource"),
        ("/api/v1/pods/x", 404, "the server could not find the requested resource"),
        ("/api/v2/pods", 404, "the server could not find the requested resource"),
        ("/api/v1/gadgets", 404, "the server could not find the requested resource"),
        (
            "/api/v1/pods?labelSelector=a%20in%20b",
            400,
            "invalid label selector 'a in b': expected '(' to open the value set, found 'b'",
        ),
        (
            "/api/v1/pods?fieldSelector=nonsense",
            400,
            "invalid selector: 'nonsense'; can't understand 'nonsense'",
        ),
        ("/api/v1/pods?watch=true", 405, "watch is not supported by this read-only emulator"),
        # exec is served now (test_emulator_exec.py): a missing pod is named, as the API does
        ("/api/v1/namespaces/ml/pods/x/exec", 404, 'pods "x" not found'),
        ("/api/v1/nodes/missing", 404, 'nodes "missing" not found'),
    ],
)
def test_error_statuses(emulator: Emulator, path: str, code: int, message: str) -> None:
    got, headers, body = _raw(emulator, path)
    status = json.loads(body)
    assert (got, status["kind"], status["status"], status["code"]) == (
        code,
        "Status",
        "Failure",
        code,
    )
    assert status["message"] == message
    assert headers["Content-Type"] == "application/json"


def test_garbage_does_not_kill_the_server(emulator: Emulator) -> None:
    with socket.create_connection((emulator.host, emulator.port), timeout=2) as sock:
        sock.sendall(b"\x00\x01 garbage \r\n\r\n")
        sock.recv(1024)
    code, _, _ = _raw(emulator, "/api/v1/namespaces/ml/pods", method="PATCH", body=b"{not json")
    assert code == 405
    code, _, body = _raw(
        emulator,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        method="POST",
        body=b"[1",
    )
    assert code == 400
    assert json.loads(body)["reason"] == "BadRequest"
    assert _raw(emulator, "/version")[0] == 200


def test_kubeconfig_and_verbose(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    data = ClusterData()
    data.add_builtin_types()
    with Emulator(data, verbose=True) as emu:
        path = emu.write_kubeconfig(tmp_path / "kc", context="ctx", namespace="ml")
        cfg = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=cfg)
        assert cfg.host == emu.url and emu.url.startswith("http://127.0.0.1:")
        assert client.CoreV1Api(client.ApiClient(cfg)).list_namespaced_pod("ml").items == []
    err = capfd.readouterr().err
    assert "GET /api/v1/namespaces/ml/pods -> 200" in err
