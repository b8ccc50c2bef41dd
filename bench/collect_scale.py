#!/usr/bin/env python3
"""How tf-collect scales: a generated 500-node cluster behind 20 ms of API latency.

    python bench/collect_scale.py [--nodes 500] [--gpus-per-node 8] [--pods 3000]
                                  [--latency 0.02] [--concurrency 16] [--qps 1000]
                                  [--no-kubectl]

The emulator serves the generated cluster. tf-collect runs once against it; then a script runs
the manual's kubectl commands one after another with the real kubectl on the same targets
(every hypervisor's logs, like the manual's `kubectl logs hypervisor-<node> --all-containers`).
Printed: both wall times and their ratio, tf-collect's API requests, the critical path bound
(requests x latency / concurrency) and tf-collect's peak RSS. Targets: >= 10x faster than the
serial kubectl script, within 1.5x of the bound, peak RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

# The tf-collect runner is the tests' (tests/scenariokit.py).
# The repo's packages before the test kits, so that tests/collector and tests/analyzer
# (folders without __init__) are not taken for the packages of those names.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from emulatorkit import KUBECTL  # the tests' choice of kubectl, one rule
from scenariokit import tf_collect

from emulator.cluster import ClusterData, LogKey
from emulator.server import Emulator, Reply, Target
from emulator.transport import Answer
from k8s.types import crd_type

ROOT = Path(__file__).resolve().parents[1]
NS = "tensor-fusion-sys"
T0 = "2026-11-30T08:00:00Z"


class Latency:
    """Every routed request answered after `seconds`, as from a server across a network."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def answer(self, target: Target, reply: Reply) -> Answer:
        time.sleep(self.seconds)
        return reply()

    def denies(self, target: Target) -> bool:
        return False


def _meta(name: str, ns: str | None = None, **extra: Any) -> dict[str, Any]:
    meta = {
        "name": name,
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ns}/{name}")),
        "resourceVersion": "1",
        "creationTimestamp": T0,
        **extra,
    }
    if ns:
        meta["namespace"] = ns
    return meta


def _container_status(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "ready": True,
        "restartCount": 0,
        "started": True,
        "image": f"docker.io/tensorfusion/{name}:2.15.0",
        "imageID": "",
        "containerID": "containerd://" + "0" * 64,
        "state": {"running": {"startedAt": T0}},
    }


def _pod(
    name: str,
    ns: str,
    labels: dict[str, str],
    containers: list[str],
    init: list[str] = (),
    node: str = "",
    annotations: dict[str, str] | None = None,
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, ns, labels=labels, annotations=annotations or {}),
        "spec": {
            "nodeName": node,
            "containers": [{"name": c, "image": f"img/{c}"} for c in containers],
            "initContainers": [{"name": c, "image": f"img/{c}"} for c in init],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.1",
            "podIP": "10.1.0.1",
            "startTime": T0,
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [_container_status(c) for c in containers],
            "initContainerStatuses": [
                {
                    **_container_status(c),
                    "ready": False,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                }
                for c in init
            ],
        },
    }


def generate(nodes: int, gpus_per_node: int, pods: int) -> ClusterData:
    data = ClusterData()
    data.add_builtin_types()
    for crd in yaml.safe_load_all(
        (ROOT / "sample_bundles/_common/tensorfusion-crds.yaml").read_text()
    ):
        data.add_type(crd_type(crd))
        data.add_object(crd)
    tf = "tensor-fusion.ai/v1"
    data.add_object({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(NS)})
    data.add_object(
        {
            "apiVersion": tf,
            "kind": "TensorFusionCluster",
            "metadata": _meta("tensor-fusion"),
            "status": {"phase": "Running"},
        }
    )
    data.add_object(
        {
            "apiVersion": tf,
            "kind": "GPUPool",
            "metadata": _meta("tensor-fusion-shared"),
            "status": {"phase": "Running"},
        }
    )
    controller = "tensor-fusion-sys-controller-6b8f9d7c54-9xk2m"
    pod = _pod(controller, NS, {"tensor-fusion.ai/component": "operator"}, ["controller", "vector"])
    # Made by its Deployment's ReplicaSet, as the chart installs it: tf-collect reads the Helm
    # release from that name (<release>-controller-<hash>), so a complete run exits 0.
    replicaset = controller.rsplit("-", 1)[0]
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": replicaset,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{NS}/{replicaset}")),
            "controller": True,
        }
    ]
    data.add_object(pod)
    data.add_object(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(
                "tensor-fusion-sys-controller",
                NS,
                labels={"tensor-fusion.ai/component": "operator"},
            ),
            "spec": {
                "selector": {"matchLabels": {"tensor-fusion.ai/component": "operator"}},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "controller",
                                "image": "tensorfusion/tensor-fusion-operator:2.17.0",
                            }
                        ]
                    }
                },
            },
        }
    )
    lines = "".join(
        f'I1130 08:{i // 60:02d}:{i % 60:02d}.000000       1 reconcile.go:42] "Reconciling" n={i}\n'
        for i in range(300)
    )
    for c in ("controller", "vector"):
        data.logs[LogKey(NS, controller, c)] = lines
    for n in range(nodes):
        node = f"gpu-node-{n:04d}"
        data.add_object(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": _meta(node, labels={"nvidia.com/gpu.present": "true"}),
                "status": {
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "allocatable": {"tensor-fusion.ai/index_0": "36"},
                    "nodeInfo": {"kubeletVersion": "v1.30.4"},
                },
            }
        )
        data.add_object(
            {
                "apiVersion": tf,
                "kind": "GPUNode",
                "metadata": _meta(node),
                "status": {"phase": "Running", "totalGPUs": gpus_per_node},
            }
        )
        hyp = f"hypervisor-{node}"
        data.add_object(
            _pod(
                hyp,
                NS,
                {"tensor-fusion.ai/component": "hypervisor"},
                ["tensor-fusion-hypervisor"],
                ["init-shm", "init-runtime"],
                node,
            )
        )
        for c in ("tensor-fusion-hypervisor", "init-shm", "init-runtime"):
            data.logs[LogKey(NS, hyp, c)] = lines[:4000]
        for g in range(gpus_per_node):
            gid = f"gpu-{uuid.uuid5(uuid.NAMESPACE_OID, f'{node}/{g}')}"
            data.add_object(
                {
                    "apiVersion": tf,
                    "kind": "GPU",
                    "metadata": _meta(gid),
                    "status": {
                        "phase": "Running",
                        "gpuModel": "NVIDIA A10G",
                        "usedBy": "tensor-fusion",
                        "capacity": {"tflops": "125", "vram": "23028Mi"},
                        "available": {"tflops": "125", "vram": "23028Mi"},
                    },
                }
            )
    for p in range(pods):
        ns = f"team-{p % 10}"
        if p < 10:
            data.add_object({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(ns)})
        data.add_object(
            _pod(
                f"train-{p:05d}",
                ns,
                {"tensor-fusion.ai/component": "worker", "tensor-fusion.ai/enabled": "true"},
                ["app"],
                ["init-soft-limiter"],
                f"gpu-node-{p % nodes:04d}",
                {"tensor-fusion.ai/is-local-gpu": "true"},
            )
        )
    return data


def serial_kubectl(kubeconfig: Path, data: ClusterData) -> tuple[float, int]:
    """The manual's commands, one after another, on the same targets."""
    k = [KUBECTL, "--kubeconfig", str(kubeconfig)]
    commands = [
        ["get", "tensorfusioncluster,gpupool,gpunode,gpu"],
        ["get", "pods", "-n", NS, "-o", "wide"],
        ["logs", "-n", NS, "deploy/tensor-fusion-sys-controller", "-c", "controller", "--tail=200"],
        ["get", "pods", "-n", NS, "-l", "tensor-fusion.ai/component=operator"],
        ["describe", "pod", "-n", NS, "-l", "tensor-fusion.ai/component=operator"],
        ["get", "nodes", "-l", "nvidia.com/gpu.present=true"],
        ["get", "gpunode"],
        ["get", "pods", "-n", NS, "-l", "tensor-fusion.ai/component=hypervisor", "-o", "wide"],
        [
            "get",
            "gpu",
            "-o",
            "custom-columns=NAME:.metadata.name,MODEL:.status.gpuModel,"
            "PHASE:.status.phase,USED_BY:.status.usedBy,CAPACITY:.status.capacity",
        ],
        ["get", "pods", "-A"],
        ["get", "tensorfusionworkload,tensorfusionconnection", "-A"],
        ["get", "gpuresourcequota", "-A"],
    ]
    for pod in data.objects[("", "pods")]:
        labels = pod["metadata"].get("labels") or {}
        if labels.get("tensor-fusion.ai/component") == "hypervisor":
            commands.append(
                ["logs", "-n", NS, pod["metadata"]["name"], "--all-containers", "--tail=200"]
            )
    t0 = time.monotonic()
    for args in commands:
        subprocess.run(k + args, capture_output=True, check=True, timeout=300)
    return time.monotonic() - t0, len(commands)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=16)
    # High enough that the client-side rate limit is not what bounds the run (see the
    # rate-limit bound printed); users keep the safe default of tf-collect itself.
    ap.add_argument("--qps", type=float, default=1000.0)
    ap.add_argument("--no-kubectl", action="store_true", help="skip the serial kubectl script")
    args = ap.parse_args()
    data = generate(args.nodes, args.gpus_per_node, args.pods)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Emulator(data, intercept=Latency(args.latency)) as emu,
    ):
        kubeconfig = Path(tmp) / "kubeconfig"
        emu.write_kubeconfig(kubeconfig)
        before = emu.requests
        server_cpu0 = _cpu(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        proc = tf_collect(
            "--no-analyze",  # the collection is measured, not the analysis shown after it
            "--kubeconfig",
            str(kubeconfig),
            "-o",
            str(Path(tmp) / "b.tar.zst"),
            "--concurrency",
            str(args.concurrency),
            "--qps",
            str(args.qps),
            timeout=3600,
        )
        collect_s = time.monotonic() - t0
        server_cpu = _cpu(resource.RUSAGE_SELF) - server_cpu0
        collector_cpu = _cpu(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"tf-collect failed ({proc.returncode}): {proc.stderr[-2000:]}")
        requests = emu.requests - before
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = (Path(tmp) / "b.tar.zst").stat().st_size
        kubectl_s, commands = (0.0, 0) if args.no_kubectl else serial_kubectl(kubeconfig, data)
    bound = requests * args.latency / args.concurrency
    # The token bucket starts full (burst = qps), then lets qps requests through a second.
    rate_bound = max(0.0, requests - args.qps) / args.qps
    print(
        f"cluster: {args.nodes} GPU nodes, {args.nodes * args.gpus_per_node} GPUs, "
        f"{args.pods} workload pods, {args.latency * 1000:.0f} ms API latency"
    )
    print(
        f"tf-collect: {collect_s:.2f} s, {requests} API requests, concurrency {args.concurrency}, "
        f"qps {args.qps:g}, bundle {size / 1024**2:.1f} MiB"
    )
    if commands:
        print(f"serial kubectl script: {kubectl_s:.2f} s for {commands} kubectl commands")
        print(f"speed-up vs serial kubectl: {kubectl_s / collect_s:.1f}x (target >= 10x)")
    print(
        f"critical path bound: {bound:.2f} s; tf-collect / bound = {collect_s / bound:.2f} "
        "(target <= 1.5)"
    )
    print(f"rate-limit bound at --qps {args.qps:g}: {rate_bound:.2f} s")
    print(f"tf-collect peak RSS: {rss_mb:.0f} MB (target <= 300 MB)")
    # Both processes share this machine's cores: no schedule finishes before their CPU time
    # spread over every core, whatever the latency bound says.
    cores = os.cpu_count() or 1
    print(
        f"CPU during the run: tf-collect {collector_cpu:.1f} s, emulator {server_cpu:.1f} s "
        f"(wall {collect_s:.1f} s); CPU floor on {cores} cores: "
        f"{(collector_cpu + server_cpu) / cores:.2f} s"
    )


if __name__ == "__main__":
    main()
