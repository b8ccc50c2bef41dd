"""What the report claims holds against the bundle: a rule that tells a history checks it,
gang members count each other's reservations, and a GPU-side cause heads the pending pods
that need its capacity (issue: diagnosis on clusters nobody here has seen)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bundlekit import read_members

from analyzer.bundle import Bundle
from analyzer.results import Analysis
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _unpack(name: str, directory: Path) -> dict[str, Any]:
    """The sample bundle `name` unpacked in `directory`; its objects members parsed."""
    members = read_members(SAMPLES / f"{name}.tar.zst")
    for member, data in members.items():
        path = directory / member
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return {m: json.loads(d) for m, d in members.items() if m.startswith("objects/")}


def _save(directory: Path, member: str, listing: dict[str, Any]) -> None:
    (directory / member).write_text(json.dumps(listing))


def _by_rule(analysis: Analysis, rule_id: str) -> list:
    return [f for f in analysis.findings() if f.rule_id == rule_id]


def test_a_gang_member_is_compared_with_the_gpus_its_peers_leave(tmp_path: Path, rules) -> None:
    """Seven GPUs have a member's four-GPU request free, but the gang needs eight at once: the
    member waiting at Permit holds four of them. Not "fits but fails a non-capacity filter"."""
    objects = _unpack("pod-pending-gang-timeout", tmp_path)
    events = objects["objects/events/ml-team.json"]
    pod = "ddp-train-66f4c8b9d7-r9x6m"
    # The scheduler's PreFilter wording, which covers capacity and the other filters alike.
    said = "no gpus available or valid in pool tensor-fusion-shared after filtering"
    for ev in events["items"]:
        if ev["involvedObject"]["name"] != pod:
            continue
        if ev["reason"] == "GPUQuotaOrCapacityNotEnough":
            ev["message"] = f"TensorFusion schedule failed, no enough resource or quotas: {said}"
        elif ev["reason"] == "FailedScheduling":
            ev["message"] = f"0/3 nodes are available: {said}."
    _save(tmp_path, "objects/events/ml-team.json", events)
    analysis = analyze(Bundle.open(tmp_path), rules)
    assert _by_rule(analysis, "pod-pending/gpu-not-fit") == []
    [capacity] = _by_rule(analysis, "pod-pending/quota-or-capacity")
    assert capacity.objects == [f"Pod/ml-team/{pod}"]

    # Alone (no gang), the same pod and GPUs would fit: the filters are to blame then.
    pods = objects["objects/pods/ml-team.json"]
    for p in pods["items"]:
        annotations = p["metadata"]["annotations"]
        for key in [k for k in annotations if "/gang-" in k]:
            del annotations[key]
    _save(tmp_path, "objects/pods/ml-team.json", pods)
    alone = analyze(Bundle.open(tmp_path), rules)
    assert [f.objects for f in _by_rule(alone, "pod-pending/gpu-not-fit")] == [
        [f"Pod/ml-team/{pod}"]
    ]


def test_a_gpu_model_without_known_tflops_heads_the_pods_pending_for_it(
    tmp_path: Path, rules
) -> None:
    """Node ip-10-40-160-61's four GPUs are an H20 the ProviderConfig does not know (TFLOPS
    capacity 0); a pod asking for four H20s is Pending for want of capacity: the GPU model is
    the root cause and the pending pod its consequence, not the other way round."""
    objects = _unpack("pod-pending-gang-timeout", tmp_path)
    gpus = objects["objects/gpus.tensor-fusion.ai/_cluster.json"]
    for gpu in gpus["items"]:
        if (
            gpu["metadata"]["labels"]["tensor-fusion.ai/managed-by"]
            == "ip-10-40-160-61.ec2.internal"
        ):
            gpu["status"]["gpuModel"] = "NVIDIA H20"
            gpu["status"]["capacity"]["tflops"] = "0"
            gpu["status"]["available"]["tflops"] = "0"
    _save(tmp_path, "objects/gpus.tensor-fusion.ai/_cluster.json", gpus)
    pods = objects["objects/pods/ml-team.json"]
    for p in pods["items"]:
        annotations = p["metadata"].get("annotations", {})
        for key in [k for k in annotations if "/gang-" in k]:
            del annotations[key]
        if p["metadata"]["name"] == "ddp-train-66f4c8b9d7-r9x6m":
            annotations["tensor-fusion.ai/gpu-model"] = "H20"
    _save(tmp_path, "objects/pods/ml-team.json", pods)
    analysis = analyze(Bundle.open(tmp_path), rules)
    pending = [
        f
        for f in _by_rule(analysis, "pod-pending/quota-or-capacity")
        if f.objects == ["Pod/ml-team/ddp-train-66f4c8b9d7-r9x6m"]
    ]
    assert len(pending) == 1
    roots = {r.id: r for r in analysis.roots}
    assert pending[0].id not in roots
    assert roots[pending[0].caused_by].rule_id == "gpu-discovery/unknown-model-tflops"


def test_pod_predates_label_tells_the_history_the_bundle_shows(rules) -> None:
    """The row's usual story (labelled after it was created) only where the bundle does not
    contradict it; pods made from a template that had the label were admitted unmutated."""
    before = analyze(Bundle.open(SAMPLES / "webhook-pod-predates-label.tar.zst"), rules)
    [notebook] = _by_rule(before, "webhook-not-injecting/pod-predates-label")
    assert "was created before it" in notebook.texts["title"]["en"]
    assert notebook.vars["made_with_label"] is False

    during = analyze(Bundle.open(SAMPLES / "webhook-admitted-while-down.tar.zst"), rules)
    findings = _by_rule(during, "webhook-not-injecting/pod-predates-label")
    assert len(findings) == 2
    for f in findings:
        assert "the webhook let it through unmutated" in f.texts["title"]["en"]
        assert "was created before it" not in f.texts["title"]["en"]
        assert "failurePolicy Ignore" in f.texts["explanation"]["en"]
        assert any(e.endswith("template label tensor-fusion.ai/enabled=true") for e in f.evidence)
        assert "webhook mpod.tensor-fusion.ai failurePolicy=Ignore" in f.evidence
        assert any(e.startswith("controller ") and "restarted 1 times" in e for e in f.evidence)
