"""`tf-analyze BUNDLE --serve`: the real kubectl browses a collected bundle."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
KUBECTL = "/usr/bin/kubectl"
NS = "tensor-fusion-sys"


@contextmanager
def serving(sample: str, tmp: Path) -> Iterator[Path]:
    """`tf-analyze <sample> --serve` running; yields its kubeconfig."""
    kubeconfig = tmp / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer", str(SAMPLES / f"{sample}.tar.zst"), "--serve",
         "--kubeconfig-out", str(kubeconfig)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not kubeconfig.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert kubeconfig.exists(), proc.stderr.read() if proc.poll() is not None else "no kubeconfig"
    yield kubeconfig
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=10)
    assert proc.returncode == 0


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving("controller-bad-config", tmp_path_factory.mktemp("serve")) as kubeconfig:
        yield kubeconfig


def kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_get_pods_wide(served: Path) -> None:
    proc = kubectl(served, "get", "pods", "-n", NS, "-o", "wide")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0].split()
    assert header[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "NODE" in header
    controller = next(line for line in proc.stdout.splitlines() if "controller" in line)
    assert "CrashLoopBackOff" in controller
    assert sum("hypervisor-" in line for line in proc.stdout.splitlines()) == 2


def test_get_tf_resources(served: Path) -> None:
    proc = kubectl(served, "get", "tensorfusioncluster,gpupool,gpunode,gpu")
    assert proc.returncode == 0, proc.stderr
    for name in (
        "tensorfusioncluster.tensor-fusion.ai/tensor-fusion",
        "gpupool.tensor-fusion.ai/tensor-fusion-shared",
    ):
        assert name in proc.stdout
    assert proc.stdout.count("gpu.tensor-fusion.ai/gpu-") == 8


def test_gpu_custom_columns(served: Path) -> None:
    proc = kubectl(
        served,
        "get",
        "gpu",
        "-o",
        "custom-columns=NAME:.metadata.name,MODEL:.status.gpuModel,"
        "PHASE:.status.phase,USED_BY:.status.usedBy,CAPACITY:.status.capacity",
    )
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert rows[0].split() == ["NAME", "MODEL", "PHASE", "USED_BY", "CAPACITY"]
    assert len(rows) == 9 and all("Running" in r and "tensor-fusion" in r for r in rows[1:])


def test_describe_and_previous_logs(served: Path) -> None:
    pods = kubectl(
        served, "get", "pods", "-n", NS, "-l", "tensor-fusion.ai/component=operator", "-o", "name"
    ).stdout.split()
    assert len(pods) == 1
    describe = kubectl(served, "describe", "-n", NS, pods[0])
    assert describe.returncode == 0, describe.stderr
    assert "CrashLoopBackOff" in describe.stdout and "BackOff" in describe.stdout
    logs = kubectl(served, "logs", "-n", NS, pods[0], "-c", "controller", "--previous")
    assert logs.returncode == 0, logs.stderr
    assert "unable to load global config file" in logs.stdout.splitlines()[-1]


def test_writes_are_refused(served: Path) -> None:
    proc = kubectl(served, "delete", "pod", "-n", NS, "anything")
    assert proc.returncode != 0
    assert "405" in proc.stderr or "MethodNotAllowed" in proc.stderr or "not allowed" in proc.stderr


def test_resources_the_cluster_did_not_have_are_not_made_up(tmp_path: Path) -> None:
    # Collected where TensorFusion was never installed: the API answered 404 for its types,
    # and kubectl over the bundle must say the same, not "No resources found".
    with serving("baseline-tf-not-installed", tmp_path) as kubeconfig:
        proc = kubectl(kubeconfig, "get", "gpupools")
        assert proc.returncode != 0
        assert 'the server doesn\'t have a resource type "gpupools"' in proc.stderr
        assert kubectl(kubeconfig, "get", "nodes").returncode == 0
