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
from emulatorkit import KUBECTL

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
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


def _server(kubeconfig: Path) -> str:
    import yaml

    return yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]


def test_serves_loopback_only_and_no_file_outside_the_bundle(served: Path) -> None:
    import http.client
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(_server(served))
    assert url.hostname == "127.0.0.1"
    # Not reachable on the machine's outward address (the one a route to the world uses;
    # connecting a UDP socket sends nothing).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("8.8.8.8", 9))
        outward = probe.getsockname()[0]
    assert not outward.startswith("127.")
    with pytest.raises(OSError):
        socket.create_connection((outward, url.port), timeout=2).close()
    # Paths that try to leave the API answer like the API server, with nothing of the file.
    for path in ("/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd",
                 "/api/v1/namespaces/../../../../etc/passwd", "//etc/hostname"):  # fmt: skip
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        assert resp.status == 404, (path, resp.status)
        assert b"root:" not in body and socket.gethostname().encode() not in body, path
    # Every write verb is refused: on an object, a collection, a cluster-scoped object, a
    # subresource and a custom resource.
    targets = (f"/api/v1/namespaces/{NS}/pods/x", f"/api/v1/namespaces/{NS}/pods",
               "/api/v1/nodes/x", f"/api/v1/namespaces/{NS}/pods/x/log",
               "/apis/tensor-fusion.ai/v1/gpupools/x")  # fmt: skip
    for target in targets:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
            conn.request(method, target, body=b"{}")
            resp = conn.getresponse()
            resp.read()
            conn.close()
            assert resp.status == 405, (method, target, resp.status)
