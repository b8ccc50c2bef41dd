"""Plain tf-collect finds TensorFusion wherever it is installed, says what it found and why,
and collects from there; -n and --release override, a namespace without TensorFusion is
reported and replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bundlekit import read_members
from scenariokit import SAMPLES, collect
from scenarioloader import load_scenario

from collector.kube import CallFailed
from collector.locate import locate
from emulator.server import Emulator
from k8s.helm_record import encode_record

GKE = "healthy-gke"  # TensorFusion in tf-system, Helm release tensor-fusion


def _collect(tmp_path: Path, *args: str, code: int = 0) -> tuple[str, dict[str, Any], set[str]]:
    out = tmp_path / "bundle.tar.zst"
    with Emulator(load_scenario(SAMPLES / GKE)) as emu:
        proc = collect(emu, out, *args, timeout=120)
    assert proc.returncode == code, proc.stderr
    members = read_members(out)
    return proc.stderr, json.loads(members["manifest.json"]), set(members)


def test_plain_collect_finds_tensorfusion_outside_tensor_fusion_sys(tmp_path: Path) -> None:
    stderr, manifest, members = _collect(tmp_path)
    assert (
        "TensorFusion: namespace tf-system, release tensor-fusion (found: 2 hypervisor pods in "
        "tf-system; operator pod tf-system/tensor-fusion-controller-7c9f8d6b4d-q2lmn; webhook "
        "mpod.tensor-fusion.ai served by tf-system/tensor-fusion-webhook)"
    ) in stderr
    assert "warning" not in stderr
    tf = manifest["tensorfusion"]
    assert (tf["namespace"], tf["release"], manifest["warnings"]) == (
        "tf-system",
        "tensor-fusion",
        [],
    )
    assert manifest["options"]["namespace"] is None and manifest["options"]["release"] is None
    # What a wrong namespace used to cost: the controller's log, the hypervisors', the release.
    assert "logs/tf-system/tensor-fusion-controller-7c9f8d6b4d-q2lmn/controller.log" in members
    assert any(m.startswith("logs/tf-system/tf-hypervisor-") for m in members)
    assert "helm/tensor-fusion.json" in members


def test_a_namespace_without_tensorfusion_is_reported_and_replaced(tmp_path: Path) -> None:
    stderr, manifest, members = _collect(tmp_path, "-n", "default", code=3)
    warning = (
        "namespace default holds no TensorFusion; collecting from tf-system, where it was found"
    )
    assert f"warning: {warning}" in stderr
    assert manifest["tensorfusion"]["namespace"] == "tf-system"
    assert manifest["warnings"] == [warning]
    assert manifest["options"]["namespace"] == "default"
    assert "logs/tf-system/tensor-fusion-controller-7c9f8d6b4d-q2lmn/controller.log" in members


def test_a_pod_asked_for_that_does_not_exist_is_a_warning(tmp_path: Path) -> None:
    stderr, manifest, _ = _collect(tmp_path, "--pod", "ml-team/does-not-exist", code=3)
    warning = "pod ml-team/does-not-exist was not found (--pod)"
    assert f"warning: {warning}" in stderr
    assert manifest["warnings"] == [warning]


def test_the_namespace_given_is_kept_when_it_holds_tensorfusion(tmp_path: Path) -> None:
    stderr, manifest, _ = _collect(tmp_path, "-n", "tf-system", "--release", "tensor-fusion")
    assert "warning" not in stderr
    assert manifest["options"]["namespace"] == "tf-system"
    assert manifest["tensorfusion"]["found_by"]


# ---------------------------------------------------------------- locate() on API answers


class FakeKube:
    """Answers lists and gets from a table of path -> items; a missing path is not found,
    a path mapped to None is forbidden."""

    def __init__(self, lists: dict[str, list[dict[str, Any]] | None], gets=None) -> None:
        self.lists, self.gets = lists, gets or {}

    def list(self, path: str, label_selector: str | None = None, **_: Any) -> dict[str, Any]:
        items = self.lists.get(path, [])
        if items is None:
            raise CallFailed("forbidden", "RBAC")
        return {"items": items}

    def get_json(self, path: str) -> dict[str, Any]:
        if path not in self.gets:
            raise CallFailed("not_found", "not found")
        return self.gets[path]


PODS = "/api/v1/pods"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
CRD = (
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/tensorfusionclusters.tensor-fusion.ai"
)


def _pod(ns: str, name: str, component: str, **labels: str) -> dict[str, Any]:
    meta = {"namespace": ns, "name": name, "labels": {"tensor-fusion.ai/component": component}}
    meta["labels"].update(labels)
    return {"metadata": meta}


def _helm_secret(release: str, chart: str) -> dict[str, Any]:
    return encode_record(
        {"name": release, "namespace": "gpu", "version": 3, "info": {"status": "deployed"},
         "chart": {"metadata": {"name": chart, "version": "1.0.0"}}}
    )  # fmt: skip


def test_the_release_comes_from_the_helm_record_when_nothing_names_it() -> None:
    kube = FakeKube(
        {
            PODS: [_pod("gpu", "ctl-7f9-abcde", "operator")],
            "/api/v1/namespaces/gpu/secrets": [
                _helm_secret("monitoring", "kube-prometheus-stack"),
                _helm_secret("tf", "tensor-fusion"),
            ],
        }
    )
    found = locate(kube, None, None)  # type: ignore[arg-type]
    assert (found.namespace, found.release, found.warnings) == ("gpu", "tf", ())
    assert found.found_by == (
        "operator pod gpu/ctl-7f9-abcde",
        "Helm release gpu/tf of chart tensor-fusion",
    )


def test_a_kustomize_install_is_found_by_its_webhook_and_controller() -> None:
    webhook = {
        "metadata": {"name": "tensor-fusion-mutating-webhook-configuration"},
        "webhooks": [{"name": "mpod-v1.kb.io", "clientConfig": {"service": {"namespace": "tensor-fusion", "name": "tensor-fusion-webhook-service"}}}],
    }  # fmt: skip
    operator = _pod("tensor-fusion", "tensor-fusion-controller-manager-5d-x", "operator")
    operator["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": "tensor-fusion-controller-manager-5d"}
    ]
    found = locate(FakeKube({PODS: [operator], WEBHOOKS: [webhook]}), None, None)  # type: ignore[arg-type]
    assert found.namespace == "tensor-fusion"
    assert found.release == "tensor-fusion"  # <release>-controller-<hash>
    assert "webhook mpod-v1.kb.io served by tensor-fusion/tensor-fusion-webhook-service" in (
        found.found_by
    )


def test_two_installations_the_operator_decides_and_the_other_is_named() -> None:
    kube = FakeKube(
        {
            PODS: [
                _pod("old-tf", "hypervisor-node-a", "hypervisor"),
                _pod(
                    "tf", "tf-controller-6b-x", "operator", **{"app.kubernetes.io/instance": "tf"}
                ),
            ]
        }
    )
    found = locate(kube, None, None)  # type: ignore[arg-type]
    assert (found.namespace, found.release) == ("tf", "tf")
    assert found.warnings == (
        "TensorFusion also appears in old-tf; collecting from tf (give -n to choose)",
    )


def test_nothing_found_is_said_and_collection_goes_on_with_the_default() -> None:
    # Pods and webhooks may not be listed (RBAC): no clue, no failure.
    found = locate(FakeKube({PODS: None, WEBHOOKS: None}), None, None)  # type: ignore[arg-type]
    assert (found.namespace, found.release, found.found_by) == (
        "tensor-fusion-sys",
        "tensor-fusion-sys",
        (),
    )
    assert found.warnings == (
        "found no TensorFusion installation (no operator or hypervisor pod, no TensorFusion "
        "webhook or CRD); collecting the cluster-wide evidence and namespace tensor-fusion-sys",
    )


def test_the_crd_helm_annotations_place_an_installation_whose_pods_are_gone() -> None:
    crd = {
        "metadata": {
            "annotations": {
                "meta.helm.sh/release-name": "tf",
                "meta.helm.sh/release-namespace": "gpu-system",
            }
        }
    }
    found = locate(FakeKube({}, {CRD: crd}), "gpu-system", None)  # type: ignore[arg-type]
    assert (found.namespace, found.release, found.warnings) == ("gpu-system", "tf", ())


def test_a_release_that_is_not_tensorfusions_is_replaced_too() -> None:
    pods = [_pod("tf", "c-1", "operator", **{"app.kubernetes.io/instance": "tf-prod"})]
    found = locate(FakeKube({PODS: pods}), "tf", "tensor-fusion-sys")  # type: ignore[arg-type]
    assert found.release == "tf-prod"
    assert found.warnings == (
        "release tensor-fusion-sys is not TensorFusion's in tf; using tf-prod",
    )
