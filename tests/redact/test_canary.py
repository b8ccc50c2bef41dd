"""The real tf-collect against the emulator, with canaries planted everywhere it can serve.

No canary may be in any member, any member name or the manifest; the analyzer must still read
the bundle and correlate Node -> GPUNode -> hypervisor pod -> GPU by the pseudonymous names.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from bundlekit import scan
from scenarioloader import load_scenario

from analyzer.bundle import Bundle
from emulator.server import Emulator
from tf_support_schemas.archive import zstd

FIXTURE = Path(__file__).parent / "fixtures" / "canary"
NS = "tensor-fusion-sys"
KEY_HEX = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"


def canaries() -> list[str]:
    lines = (FIXTURE / "canaries.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _helm_release_configmap() -> dict:
    """A Helm release kept with HELM_DRIVER=configmap: values hold secrets, gzip+base64."""
    release = {
        "name": NS,
        "namespace": NS,
        "version": 3,
        "info": {"status": "deployed", "last_deployed": "2025-03-01T08:00:00Z"},
        "chart": {
            "metadata": {"name": "tensor-fusion", "version": "1.8.7", "appVersion": "2.17.0"}
        },
        "config": {
            "greptime": {"isCloud": True, "user": "admin", "password": "canary-helm-password-0x1"},
            "agent": {"enrollToken": "canary-helm-enroll-token-0x2"},
            "controller": {"admissionWebhooks": {"secretName": "tensor-fusion-webhook-secret"}},
        },
        "manifest": "kind: Secret\ndata:\n  password: Y2FuYXJ5\n",
    }
    payload = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"sh.helm.release.v1.{NS}.v3",
            "namespace": NS,
            "labels": {"owner": "helm", "name": NS, "version": "3", "status": "deployed"},
            "uid": "5b0c2c0e-2f7e-4a59-9a1d-8a5c1f6d2e11",
            "resourceVersion": "4242",
            "creationTimestamp": "2025-03-01T08:00:00Z",
        },
        "data": {"release": payload},
    }


def _members(path: Path) -> dict[str, bytes]:
    with zstd.open(path, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        return {info.name: tar.extractfile(info).read() for info in tar if info.isfile()}


@pytest.fixture(scope="module")
def collected(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("canary")
    data = load_scenario(FIXTURE)
    data.add_object(_helm_release_configmap())
    with Emulator(data) as emu:
        kubeconfig = tmp / "kubeconfig"
        emu.write_kubeconfig(kubeconfig)
        out, mapping = tmp / "bundle.tar.zst", tmp / "redaction-map.json"
        env = {**os.environ, "TF_COLLECT_REDACTION_KEY": KEY_HEX}
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
                str(mapping),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    assert proc.returncode in (0, 3), proc.stderr
    return out, mapping, proc


def test_no_canary_anywhere(collected) -> None:
    out, _, _ = collected
    members = _members(out)
    assert "manifest.json" in members and len(members) > 5
    leaks = [
        (canary, where)
        for canary in canaries()
        for where, data in [*members.items(), *((f"name {n}", n.encode()) for n in members)]
        if canary.encode() in data
    ]
    assert leaks == []
    # And the analyzer's own last look for secret shapes finds nothing either.
    assert scan(members) == []


def test_manifest_counts_kinds_and_members_not_values(collected) -> None:
    out, _, _ = collected
    manifest = json.loads(_members(out)["manifest.json"])
    redaction = manifest["redaction"]
    assert redaction["enabled"] is True and redaction["public_ips"] is False
    for kind in ("ipv4", "hostname", "jwt", "license", "password", "private-key", "github-token"):
        assert redaction["counts"].get(kind, 0) > 0, kind
    assert set(redaction["files"]) <= set(_members(out)) | {"manifest.json"}


def test_analyzer_reads_and_correlates_the_redacted_bundle(collected) -> None:
    out, _, _ = collected
    bundle = Bundle.open(out)
    (hypervisor,) = bundle.objects(
        "pods", namespace=NS, labels="tensor-fusion.ai/component=hypervisor"
    )
    node_name = hypervisor["spec"]["nodeName"]
    assert node_name.startswith("ip-10-") and node_name.endswith(".ec2.internal")
    assert hypervisor["metadata"]["name"] == f"hypervisor-{node_name}"
    assert node_name in {n["metadata"]["name"] for n in bundle.objects("nodes")}
    assert node_name in {
        n["metadata"]["name"] for n in bundle.objects("gpunodes", group="tensor-fusion.ai")
    }
    (gpu,) = bundle.objects("gpus", group="tensor-fusion.ai")
    assert gpu["status"]["nodeSelector"]["kubernetes.io/hostname"] == node_name
    assert gpu["metadata"]["ownerReferences"][0]["name"] == node_name
    assert gpu["status"]["uuid"] == "GPU-337d5efe-90a4-32c4-afcb-78ea5e3a5606"  # kept
    log = bundle.log(NS, hypervisor["metadata"]["name"], "hypervisor")
    assert (
        log is not None
        and log.status == "ok"
        and any("token expired" in line for line in log.lines)
    )
    node = next(n for n in bundle.objects("nodes") if n["metadata"]["name"] == node_name)
    internal_ip = node["status"]["addresses"][0]["address"]
    assert node_name == "ip-" + internal_ip.replace(".", "-") + ".ec2.internal"


def test_helm_values_are_redacted_and_release_records_not_kept(collected) -> None:
    out, _, _ = collected
    members = _members(out)
    helm = [name for name in members if name.startswith("helm/")]
    if helm:
        values = json.loads(members[helm[0]])["values"]
        assert values["greptime"]["user"] == "admin"
        assert values["greptime"]["password"].startswith("<redacted:password:")
    for name, data in members.items():
        if "configmaps" in name:
            for cm in json.loads(data)["items"]:
                if (cm["metadata"].get("labels") or {}).get("owner") == "helm":
                    assert cm["data"]["release"].startswith("<redacted:helm-release:")


def test_redaction_map_is_private_and_outside(collected) -> None:
    out, mapping, _ = collected
    assert mapping.parent == out.parent and mapping.exists()
    assert stat.S_IMODE(mapping.stat().st_mode) == 0o600
    entries = json.loads(mapping.read_text())["map"]
    assert entries["10.0.3.17"].startswith("10.") and entries["10.0.3.17"] != "10.0.3.17"
    assert entries["canary-license-value-7f3a"].startswith("<redacted:license:")
    assert not any("redaction-map" in n for n in _members(out))
