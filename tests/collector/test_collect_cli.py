"""tf-collect against the emulator: what it records, how it fails, what it never leaves behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from faultkit import FaultyEmulator
from scenariokit import SAMPLES, collect_scenario, tf_collect
from scenarioloader import load_scenario

from analyzer.bundle import Bundle
from emulator.server import Emulator
from tf_support_schemas.archive import zstd

NS = "tensor-fusion-sys"


@pytest.fixture()
def emulator(tmp_path: Path):
    with FaultyEmulator(load_scenario(SAMPLES / "healthy")) as emu:
        emu.kubeconfig = tmp_path / "kubeconfig"
        emu.write_kubeconfig(emu.kubeconfig)
        yield emu


def test_baseline_bundle_contents(emulator, tmp_path: Path) -> None:
    out = tmp_path / "b.tar.zst"
    proc = tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr  # not a terminal: plain lines, no escape codes
    assert "Send this file as it is" in proc.stderr
    bundle = Bundle.open(out)
    kinds = {
        o["kind"]
        for group_res in bundle.resources()
        for o in bundle.objects(group_res[1], group=group_res[0])
    }
    assert {"TensorFusionCluster", "GPUPool", "GPUNode", "GPU", "Pod", "Deployment"} <= kinds
    # Hypervisor pods are found by label, and every container's log is there.
    hypervisors = bundle.objects(
        "pods", namespace=NS, labels="tensor-fusion.ai/component=hypervisor"
    )
    assert len(hypervisors) == 2
    for pod in hypervisors:
        for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
            log = bundle.log(NS, pod["metadata"]["name"], c["name"])
            assert log is not None and log.status in ("ok", "truncated"), c["name"]
    manifest = bundle.manifest
    assert manifest["cluster"]["server_version"].startswith("v1.")
    assert manifest["tensorfusion"] == {
        "namespace": NS,
        "release": NS,
        "version": manifest["tensorfusion"]["version"],
        "installed": True,
        "found_by": [
            f"2 hypervisor pods in {NS}",
            f"operator pod {NS}/tensor-fusion-sys-controller-6b8f9d7c54-9xk2m",
            f"webhook mpod.tensor-fusion.ai served by {NS}/tensor-fusion-sys-webhook",
        ],
    }
    assert manifest["warnings"] == []
    assert manifest["tensorfusion"]["version"]
    # Secrets are never read.
    assert not any(a.get("resource") == "secrets" for a in manifest["artifacts"])


def test_archive_is_deterministic_and_manifest_first(emulator, tmp_path: Path) -> None:
    out = tmp_path / "b.tar.zst"
    assert tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out)).returncode == 0
    with zstd.open(out, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        infos = list(tar)
    names = [i.name for i in infos]
    assert names[0] == "manifest.json"
    assert names[1:] == sorted(names[1:])
    assert {(i.uid, i.gid, i.uname, i.gname, i.mode) for i in infos} == {(0, 0, "", "", 0o644)}
    assert len({i.mtime for i in infos}) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_forbidden_and_failing_calls_are_recorded_and_the_run_goes_on(
    emulator, tmp_path: Path
) -> None:
    emulator.faults.add(resource="events", verb="list", status=403)
    emulator.faults.add(resource="gpus", verb="list", status=500)
    out = tmp_path / "b.tar.zst"
    proc = tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out))
    assert proc.returncode == 3, proc.stderr  # PARTIAL: a bundle, with gaps
    arts = {
        (a.get("resource"), a["status"])
        for a in Bundle.open(out).artifacts
        if a["type"] == "objects"
    }
    assert ("events", "forbidden") in arts
    assert ("gpus", "error") in arts
    assert ("gpupools", "ok") in arts and ("pods", "ok") in arts
    # Each failure names its step and what it was, as the analyzer's report does: the three
    # event lists of cluster-scoped kinds are three lines, each with its own selector.
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert any(
        line.startswith("forbidden: baseline/tf-events: events in tensor-fusion-sys: ")
        for line in lines
    )
    cluster_events = [
        line
        for line in lines
        if line.startswith("forbidden: hypervisor-not-ready/cluster-events: events in default ")
    ]
    assert len(cluster_events) == len(set(cluster_events)) == 5  # one per involvedObject.kind
    assert any(
        line.startswith("error: baseline/tf-resources: gpus.tensor-fusion.ai: ") for line in lines
    )


def test_retry_after_is_honoured(emulator, tmp_path: Path) -> None:
    emulator.faults.add(resource="gpunodes", verb="list", status=429, count=1, retry_after=1)
    out = tmp_path / "b.tar.zst"
    t0 = time.monotonic()
    proc = tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 >= 1.0
    art = next(a for a in Bundle.open(out).artifacts if a.get("resource") == "gpunodes")
    assert art["status"] == "ok" and art["count"] == 2


def test_no_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    proc = tf_collect("--kubeconfig", str(tmp_path / "missing"), "-o", str(tmp_path / "b.tar.zst"))
    assert proc.returncode == 4
    assert proc.stderr.strip().startswith("tf-collect: kubeconfig")
    assert "Traceback" not in proc.stderr


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with Emulator(load_scenario(SAMPLES / "healthy")) as emu:
        emu.write_kubeconfig(kubeconfig)
    # The server is gone now; its port refuses connections.
    proc = tf_collect(
        "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "b.tar.zst"), "--request-timeout", "2"
    )
    assert proc.returncode == 5, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "did not answer" in proc.stderr
    assert list(p.name for p in tmp_path.iterdir()) == ["kubeconfig"]


def test_expired_token_is_a_config_error(emulator, tmp_path: Path) -> None:
    # An expired or revoked token: the API server answers, with 401 to everything.
    emulator.faults.add(status=401, message="Unauthorized")
    out = tmp_path / "out"
    out.mkdir()
    proc = tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out / "b.tar.zst"))
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tf-collect: "), proc.stderr
    assert "refused the credentials" in lines[0] and "401" in lines[0], lines[0]
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("apiVersion: v1\nclusters: [{name: x\n", "is not valid YAML"),
        ("- just\n- a list\n", "is not a valid kubeconfig"),
        ("", "is empty"),
    ],
    ids=["not yaml", "a list", "empty"],
)
def test_unusable_kubeconfig_is_one_line(tmp_path: Path, content: str, words: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(content)
    proc = tf_collect("--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "b.tar.zst"))
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tf-collect: "), proc.stderr
    assert words in lines[0], lines[0]
    assert [p.name for p in tmp_path.iterdir()] == ["kubeconfig"]


def test_missing_output_directory(emulator, tmp_path: Path) -> None:
    proc = tf_collect(
        "--kubeconfig", str(emulator.kubeconfig), "-o", str(tmp_path / "no" / "b.tar.zst")
    )
    assert proc.returncode == 6
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not exist" in lines[0], proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["kubeconfig"]  # nothing made, not even it


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_leaves_nothing(emulator, tmp_path: Path, sig: int) -> None:
    emulator.faults.latency = 0.3  # slow enough to interrupt mid-run
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collector",
            "--kubeconfig",
            str(emulator.kubeconfig),
            "-o",
            str(out / "b.tar.zst"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not any(out.iterdir()) and time.monotonic() < deadline:  # staging has begun
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert list(out.iterdir()) == []
    assert "interrupted" in err


def test_manifest_validates_against_schema(emulator, tmp_path: Path) -> None:
    import tf_support_schemas as schemas

    out = tmp_path / "b.tar.zst"
    assert tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(out)).returncode == 0
    with zstd.open(out, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        first = next(iter(tar))
        manifest = json.load(tar.extractfile(first))
    assert schemas.first_error("manifest", manifest) is None


def test_what_the_api_says_does_not_exist_is_named_too(tmp_path: Path) -> None:
    proc, _, _ = collect_scenario("baseline-tf-not-installed", tmp_path)
    lines = proc.stderr.splitlines()
    assert "Collected 28 artifacts (8 not_found, 20 ok)" in proc.stderr
    absent = [line for line in lines if line.startswith("  not_found: ")]
    assert len(absent) == 8
    assert (
        "  not_found: baseline/tf-resources: gpus.tensor-fusion.ai: the tensor-fusion.ai API "
        "group is not served: TensorFusion CRDs are not installed"
    ) in absent
    assert any(
        line.startswith("  not_found: controller-crash/helm-release: ")
        and "no Helm release 'tensor-fusion-sys' in tensor-fusion-sys" in line
        for line in absent
    )


def test_redact_starts_without_the_collection_machinery() -> None:
    # `tf-collect redact` runs on laptops over existing files: the Kubernetes client and the
    # schema validator (a third of a second to import) load only to collect or validate.
    code = (
        "import sys, collector.cli\n"
        "loaded = sorted(m for m in ('kubernetes', 'jsonschema', 'collector.run') if m in sys.modules)\n"
        "print(loaded)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
