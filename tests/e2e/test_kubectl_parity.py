"""Parity: for each manual command, the real kubectl and the bundle see the same thing.

The emulator serves a scenario; the manual's commands run through the real kubectl with the
placeholders filled in; tf-collect collects the same cluster once; each command's objects or
log lines must be in the bundle, exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bundlekit import original_of, pseudonymise
from emulatorkit import KUBECTL
from scenarioloader import load_scenario

from analyzer.bundle import Bundle
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
NS = "tensor-fusion-sys"
PENDING = ("ml-team", "llm-serve-7b9d4c6f8-q8w2n")
MAP: dict[str, str] = {}  # original -> placeholder, from the collection's redaction map


def p(text: str) -> str:
    """What kubectl shows, as the redacted bundle reads it."""
    return pseudonymise(text, MAP)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("parity")
    with Emulator(load_scenario(SAMPLES / "pending-quota")) as emu:
        kubeconfig = tmp / "kubeconfig"
        emu.write_kubeconfig(kubeconfig)
        out = tmp / "b.tar.zst"
        map_file = tmp / "map.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "collector",
                "--kubeconfig",
                str(kubeconfig),
                "-o",
                str(out),
                "--redaction-map",
                str(map_file),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        MAP.update(json.loads(map_file.read_text())["map"])
        yield kubeconfig, Bundle.open(out)


def kubectl(kubeconfig: Path, *args: str) -> str:
    proc = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def names(kubeconfig: Path, *args: str) -> set[str]:
    items = json.loads(kubectl(kubeconfig, *args, "-o", "json"))["items"]
    return {
        p(f"{i['kind']}/{i['metadata'].get('namespace', '')}/{i['metadata']['name']}")
        for i in items
    }


def bundle_names(bundle: Bundle, resource: str, group: str = "", **kw: str) -> set[str]:
    return {
        f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for o in bundle.objects(resource, group=group, **kw)
    }


TF = "tensor-fusion.ai"

OBJECT_COMMANDS = {
    "kubectl get tensorfusioncluster,gpupool,gpunode,gpu": (
        ["get", "tensorfusioncluster,gpupool,gpunode,gpu"],
        [
            ("tensorfusionclusters", TF, {}),
            ("gpupools", TF, {}),
            ("gpunodes", TF, {}),
            ("gpus", TF, {}),
        ],
    ),
    "kubectl get pods -n tensor-fusion-sys -o wide": (
        ["get", "pods", "-n", NS],
        [("pods", "", {"namespace": NS})],
    ),
    "kubectl get pods -n tensor-fusion-sys -l tensor-fusion.ai/component=operator": (
        ["get", "pods", "-n", NS, "-l", "tensor-fusion.ai/component=operator"],
        [("pods", "", {"namespace": NS, "labels": "tensor-fusion.ai/component=operator"})],
    ),
    "kubectl get nodes -l nvidia.com/gpu.present=true": (
        ["get", "nodes", "-l", "nvidia.com/gpu.present=true"],
        [("nodes", "", {"labels": "nvidia.com/gpu.present=true"})],
    ),
    "kubectl get pods -A | grep -E 'ImagePullBackOff|ErrImagePull'": (
        ["get", "pods", "-A"],
        [("pods", "", {})],
    ),
    "kubectl get tensorfusionworkload,tensorfusionconnection -n <namespace>": (
        ["get", "tensorfusionworkload,tensorfusionconnection", "-n", "ml-team"],
        [
            ("tensorfusionworkloads", TF, {"namespace": "ml-team"}),
            ("tensorfusionconnections", TF, {"namespace": "ml-team"}),
        ],
    ),
    "kubectl get gpuresourcequota -n <namespace>": (
        ["get", "gpuresourcequota", "-n", "ml-team"],
        [("gpuresourcequotas", TF, {"namespace": "ml-team"})],
    ),
    "kubectl get pods -n <namespace> -l tensor-fusion.ai/component=worker": (
        ["get", "pods", "-n", "ml-team", "-l", "tensor-fusion.ai/component=worker"],
        [("pods", "", {"namespace": "ml-team", "labels": "tensor-fusion.ai/component=worker"})],
    ),
    "kubectl get mutatingwebhookconfiguration tensor-fusion-sys-mutating-webhook": (
        [
            "get",
            "mutatingwebhookconfiguration",
            "--field-selector",
            "metadata.name=tensor-fusion-sys-mutating-webhook",
        ],
        [("mutatingwebhookconfigurations", "admissionregistration.k8s.io", {})],
    ),
}


@pytest.mark.parametrize("command", sorted(OBJECT_COMMANDS))
def test_objects_match(cluster, command: str) -> None:
    kubeconfig, bundle = cluster
    args, sources = OBJECT_COMMANDS[command]
    want = names(kubeconfig, *args)
    have = set().union(*(bundle_names(bundle, r, g, **kw) for r, g, kw in sources))
    assert want and want == have


def _controller_pod(bundle: Bundle) -> str:
    [pod] = bundle.objects("pods", namespace=NS, labels="tensor-fusion.ai/component=operator")
    return pod["metadata"]["name"]


def test_controller_logs_match(cluster) -> None:
    kubeconfig, bundle = cluster
    out = kubectl(
        kubeconfig,
        "logs",
        "-n",
        NS,
        "deploy/tensor-fusion-sys-controller",
        "-c",
        "controller",
        "--tail=200",
    )
    log = bundle.log(NS, _controller_pod(bundle), "controller")
    assert log is not None and list(log.lines) == [p(x) for x in out.splitlines()]


def test_mutating_pod_lines_match(cluster) -> None:
    kubeconfig, bundle = cluster
    out = kubectl(
        kubeconfig, "logs", "-n", NS, "deploy/tensor-fusion-sys-controller", "-c", "controller"
    )
    want = [p(line) for line in out.splitlines() if "Mutating pod" in line]
    log = bundle.log(NS, _controller_pod(bundle), "controller", grep="Mutating pod")
    assert want and log is not None and list(log.lines) == want


def test_hypervisor_logs_match_for_every_container(cluster) -> None:
    kubeconfig, bundle = cluster
    pods = bundle.objects("pods", namespace=NS, labels="tensor-fusion.ai/component=hypervisor")
    assert len(pods) == 2
    for pod in pods:
        name = pod["metadata"]["name"]
        real = _original(name)
        for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]:
            out = kubectl(kubeconfig, "logs", "-n", NS, real, "-c", c["name"], "--tail=200")
            log = bundle.log(NS, name, c["name"])
            assert log is not None and list(log.lines) == [p(x) for x in out.splitlines()], c[
                "name"
            ]


def test_describe_pending_pod_events_match(cluster) -> None:
    kubeconfig, bundle = cluster
    ns, name = PENDING
    out = kubectl(kubeconfig, "describe", "pod", name, "-n", ns)
    (pod,) = bundle.objects("pods", namespace=ns, fields=f"metadata.name={name}")
    reasons = {e["reason"] for e in bundle.events_for(pod)}
    assert {"GPUQuotaOrCapacityNotEnough", "FailedScheduling"} <= reasons
    events_part = out.split("Events:", 1)[1]
    for reason in reasons:
        assert reason in events_part


def _original(redacted: str) -> str:
    """The cluster's real name for a name as the bundle shows it."""
    return original_of(redacted, MAP)


def test_describe_gpunode_events_match(cluster) -> None:
    kubeconfig, bundle = cluster
    for node in bundle.objects("gpunodes", group=TF):
        name = _original(node["metadata"]["name"])
        out = json.loads(
            kubectl(
                kubeconfig,
                "get",
                "events",
                "-n",
                "default",
                "--field-selector",
                f"involvedObject.kind=GPUNode,involvedObject.name={name}",
                "-o",
                "json",
            )
        )["items"]
        have = {e["metadata"]["name"] for e in bundle.events_for(node)}
        assert {p(e["metadata"]["name"]) for e in out} == have
