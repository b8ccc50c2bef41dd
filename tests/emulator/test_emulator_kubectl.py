"""The real kubectl against the emulator serving the tf-basic scenario."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulatorkit import Kubectl, make_kubectl
from faultkit import FaultyEmulator

from emulator.cluster import ClusterData, version_info
from emulator.server import Emulator

CONTROLLER_POD = "tensor-fusion-sys-controller-6d8f9c7b5d-x7k2p"


def _header(output: str) -> list[str]:
    return re.split(r"\s{2,}", output.splitlines()[0].strip())


def _rows(output: str) -> dict[str, list[str]]:
    """Rows of kubectl's table output keyed by their NAME (or NAMESPACE/NAME) cell."""
    header = _header(output)
    rows = {}
    for line in output.splitlines()[1:]:
        if not line.strip():
            continue
        cells = re.split(r"\s{2,}", line.strip())
        key = cells[header.index("NAME")]
        rows[key] = cells
    return rows


def test_get_pods_all_namespaces_wide(kubectl: Kubectl) -> None:
    out = kubectl("get", "pods", "-A", "-o", "wide", check=True).stdout
    assert _header(out) == [
        "NAMESPACE",
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    rows = _rows(out)
    llm = rows["llm-inference-7d9f8b6c4-abcde"]
    assert llm[:4] == ["ml", "llm-inference-7d9f8b6c4-abcde", "0/1", "CrashLoopBackOff"]
    assert re.fullmatch(r"5 \(\S+ ago\)", llm[4])
    assert llm[6:8] == ["10.244.2.31", "gpu-node-1"]
    assert rows[CONTROLLER_POD][2:4] == ["1/2", "CrashLoopBackOff"]
    assert rows["train-job-0"][2:4] == ["0/1", "Pending"]
    assert rows["train-job-0"][6:8] == ["<none>", "<none>"]
    assert rows["hypervisor-gpu-node-1"][2:5] == ["2/2", "Running", "0"]
    assert rows["node-discovery-gpu-node-1"][3] == "Completed"
    # sorted by namespace, then name, as the API lists them
    assert [r[0] for r in rows.values()] == ["ml", "ml", *["tensor-fusion-sys"] * 3]


def test_get_tensor_fusion_resources(kubectl: Kubectl) -> None:
    out = kubectl("get", "tensorfusioncluster,gpupool,gpunode,gpu", check=True).stdout
    blocks = [b for b in out.split("\n\n") if b.strip()]
    assert len(blocks) == 4
    cluster, pool, node, gpus = blocks
    # no printer columns declared: the CRD default, NAME and AGE
    assert _header(cluster) == ["NAME", "AGE"]
    assert "tensorfusioncluster.tensor-fusion.ai/shared-tensor-fusion-cluster" in cluster
    assert _header(pool) == [
        "NAME",
        "PHASE",
        "TOTAL NODES",
        "TOTAL GPUS",
        "TOTAL TFLOPS",
        "READY",
        "AGE",
    ]
    pool_row = _rows(pool)["gpupool.tensor-fusion.ai/shared-tensor-fusion-cluster-shared"]
    assert pool_row[1:6] == ["Running", "1", "2", "624", "True"]
    # priority-1 columns only with -o wide
    assert "MANAGED GPUS" not in _header(node)
    assert _header(gpus)[:3] == ["NAME", "GPU MODEL", "PHASE"]
    gpu = _rows(gpus)["gpu.tensor-fusion.ai/gpu-8c3d0e77"]
    assert gpu[1:3] == ["A100_SXM_80G", "Pending"]
    assert gpu[-1] == '{"kubernetes.io/hostname":"gpu-node-1"}'


def test_get_gpunode_wide_shows_priority_columns(kubectl: Kubectl) -> None:
    out = kubectl("get", "gpunode", "-o", "wide", check=True).stdout
    assert _header(out)[-1] == "MANAGED GPUS"


def test_get_gpu_custom_columns(kubectl: Kubectl) -> None:
    spec = (
        "NAME:.metadata.name,MODEL:.status.gpuModel,PHASE:.status.phase,"
        "USED_BY:.status.usedBy,CAPACITY:.status.capacity"
    )
    out = kubectl("get", "gpu", "-o", f"custom-columns={spec}", check=True).stdout
    assert _header(out) == ["NAME", "MODEL", "PHASE", "USED_BY", "CAPACITY"]
    rows = _rows(out)
    assert rows["gpu-1f9a6c52"] == [
        "gpu-1f9a6c52",
        "A100_SXM_80G",
        "Running",
        "tensor-fusion",
        "map[tflops:312 vram:80Gi]",
    ]
    assert rows["gpu-8c3d0e77"][3] == "nvidia-device-plugin"


def test_get_gpu_json(kubectl: Kubectl) -> None:
    obj = json.loads(kubectl("get", "gpu", "gpu-1f9a6c52", "-o", "json", check=True).stdout)
    assert obj["apiVersion"] == "tensor-fusion.ai/v1"
    assert obj["kind"] == "GPU"
    assert obj["status"]["uuid"] == "GPU-1f9a6c52-3b1e-4c1d-9f0e-7a2b5c8d1e01"
    assert obj["metadata"]["uid"] and obj["metadata"]["resourceVersion"].isdigit()


def test_describe_pod_shows_events(kubectl: Kubectl) -> None:
    out = kubectl("describe", "pod", "llm-inference-7d9f8b6c4-abcde", "-n", "ml", check=True).stdout
    assert re.search(r"^Name:\s+llm-inference-7d9f8b6c4-abcde$", out, re.M)
    assert re.search(r"^\s+Reason:\s+CrashLoopBackOff$", out, re.M)
    assert re.search(r"^\s+Restart Count:\s+5$", out, re.M)
    events = out.split("Events:", 1)[1]
    assert re.search(
        r"Warning\s+BackOff\s+\S+ \(x25 over \S+\)\s+kubelet\s+Back-off restarting", events
    )


def test_describe_pod_by_label(kubectl: Kubectl) -> None:
    out = kubectl(
        "describe",
        "pod",
        "-n",
        "tensor-fusion-sys",
        "-l",
        "tensor-fusion.ai/component=operator",
        check=True,
    ).stdout
    assert re.search(rf"^Name:\s+{CONTROLLER_POD}$", out, re.M)
    assert "hypervisor-gpu-node-1" not in out
    assert "Controlled By:  ReplicaSet/tensor-fusion-sys-controller-6d8f9c7b5d" in out
    assert re.search(r"Warning\s+BackOff\s+.*Back-off restarting failed container controller", out)


def test_logs_of_deployment_container_tail(kubectl: Kubectl) -> None:
    out = kubectl(
        "logs",
        "-n",
        "tensor-fusion-sys",
        "deploy/tensor-fusion-sys-controller",
        "-c",
        "controller",
        "--tail=5",
        check=True,
    ).stdout
    assert out.splitlines() == [
        f"2025-03-01T09:00:0{i}Z INFO controller line {i}" for i in range(4, 9)
    ]


def test_logs_previous(kubectl: Kubectl) -> None:
    out = kubectl(
        "logs",
        "-n",
        "tensor-fusion-sys",
        "deploy/tensor-fusion-sys-controller",
        "-c",
        "controller",
        "--previous",
        check=True,
    ).stdout
    assert "unable to start manager: failed to wait for webhook certificate" in out
    missing = kubectl(
        "logs", "-n", "tensor-fusion-sys", "hypervisor-gpu-node-1", "-c", "vector", "--previous"
    )
    assert missing.returncode == 1
    assert (
        'Error from server (BadRequest): previous terminated container "vector" in pod '
        '"hypervisor-gpu-node-1" not found'
    ) in missing.stderr


def test_logs_all_containers_tail(kubectl: Kubectl) -> None:
    out = kubectl(
        "logs",
        "-n",
        "tensor-fusion-sys",
        "hypervisor-gpu-node-1",
        "--all-containers",
        "--tail=3",
        check=True,
    ).stdout
    # kubectl fetches the containers in no fixed order; each one gives its last 3 lines
    assert sorted(out.splitlines()) == sorted(
        [
            "shm ready",
            *[f"hypervisor line {i}" for i in (3, 4, 5)],
            *[f"vector line {i}" for i in (2, 3, 4)],
        ]
    )


def test_get_pods_by_label(kubectl: Kubectl) -> None:
    out = kubectl(
        "get",
        "pods",
        "-n",
        "tensor-fusion-sys",
        "-l",
        "tensor-fusion.ai/component in (operator,hypervisor)",
        check=True,
    ).stdout
    assert sorted(_rows(out)) == ["hypervisor-gpu-node-1", CONTROLLER_POD]
    out = kubectl(
        "get", "pods", "-A", "-l", "tensor-fusion.ai/component!=operator,app", check=True
    ).stdout
    assert sorted(_rows(out)) == ["llm-inference-7d9f8b6c4-abcde", "train-job-0"]


def test_get_pods_by_field_selector(kubectl: Kubectl) -> None:
    out = kubectl("get", "pods", "--field-selector", "status.phase=Pending", "-A", check=True)
    assert list(_rows(out.stdout)) == ["train-job-0"]
    bad = kubectl("get", "pods", "--field-selector", "spec.color=blue", "-A")
    assert bad.returncode == 1
    assert "field label not supported: spec.color" in bad.stderr


def test_not_found(kubectl: Kubectl) -> None:
    proc = kubectl("get", "pod", "nope")
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_nodes_events_and_write_refused(kubectl: Kubectl) -> None:
    nodes = _rows(kubectl("get", "nodes", check=True).stdout)
    assert nodes["cpu-node-1"][1:3] == ["NotReady,SchedulingDisabled", "control-plane"]
    assert nodes["gpu-node-1"][1:3] == ["Ready", "<none>"]
    events = kubectl("get", "events", "-n", "ml", check=True).stdout
    assert _header(events) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "pod/train-job-0" in events and "FailedScheduling" in events
    refused = kubectl("delete", "pod", "-n", "ml", "train-job-0")
    assert refused.returncode == 1
    assert "MethodNotAllowed" in refused.stderr


def test_forbidden_fault_as_kubectl_shows_it(emulator: FaultyEmulator, kubectl: Kubectl) -> None:
    emulator.faults.add(resource="gpus", verb="list", status=403)
    proc = kubectl("get", "gpus")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "Error from server (Forbidden): gpus.tensor-fusion.ai is forbidden: User "
        '"system:serviceaccount:default:tf-support" cannot list resource "gpus" in API group '
        '"tensor-fusion.ai" at the cluster scope'
    )
    assert kubectl("auth", "can-i", "list", "gpus.tensor-fusion.ai").stdout.strip() == "no"
    assert kubectl("auth", "can-i", "list", "pods").stdout.strip() == "yes"


# --- other kubectl versions and plain discovery -----------------------------------------------


@pytest.fixture(params=["v1.32.4", "v1.28.9"], scope="module")
def other_kubectl(
    request: pytest.FixtureRequest, tf_data: ClusterData, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Kubectl, Emulator]]:
    # /usr/bin/kubectl picks the client minor matching the server's, so a different
    # serverVersion exercises another kubectl; the 1.28 one also runs with plain discovery.
    data = copy.copy(tf_data)
    data.server_version = version_info(request.param)
    aggregated = request.param != "v1.28.9"
    with Emulator(data, aggregated_discovery=aggregated) as emu:
        home = tmp_path_factory.mktemp("home")
        yield make_kubectl(emu.write_kubeconfig(Path(home) / "config"), home), emu


def test_other_kubectl_versions(other_kubectl: tuple[Kubectl, Emulator]) -> None:
    run, emu = other_kubectl
    version = json.loads(run("version", "-o", "json", check=True).stdout)
    assert version["serverVersion"]["gitVersion"] in ("v1.32.4", "v1.28.9")
    out = run("get", "pods", "-A", "-o", "wide", check=True).stdout
    assert _rows(out)["llm-inference-7d9f8b6c4-abcde"][3] == "CrashLoopBackOff"
    gpus = run("get", "gpu", check=True).stdout
    assert _header(gpus)[:2] == ["NAME", "GPU MODEL"]
    logs = run("logs", "-n", "ml", "llm-inference-7d9f8b6c4-abcde", "--previous", check=True).stdout
    assert "CUDA error: out of memory" in logs
    # plain discovery walks every group version; aggregated discovery needs only /api and /apis
    paths = {path.split("?")[0] for _, path, _ in emu.history}
    assert ("/apis/tensor-fusion.ai/v1" in paths) == (not emu.aggregated_discovery)
