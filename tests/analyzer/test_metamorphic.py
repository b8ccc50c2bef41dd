"""Metamorphic tests: every sample bundle, rewritten the ways real clusters differ from the
samples (tests/variantkit.py), gives the same findings.

Most samples grow from one cluster (EKS, one chart version, core/v1 Events, TensorFusion
and its Helm release both named tensor-fusion-sys). A variant renames every name a cluster
chooses (namespace and release apart), shows its Events as events.k8s.io writes them, its
nodes as GKE or an on-prem cluster shows them, its lists in another order, or adds unrelated
failing workloads, or all of these; it must give the same (manual key, objects) pairs,
objects named as the variant names them, the same first root cause, and no rule may fail on
it that did not fail on the sample, and a sample with a fault must keep the verdict "problems
found". The last tests hold the transforms to what they claim.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import samplekit
import yaml
from samplekit import SAMPLES, members, sample
from scenarioloader import scenario_names
from variantkit import (
    FIXED_NAMES,
    Transform,
    Variant,
    compose,
    events_v1,
    name_atoms,
    noise,
    platform,
    rename,
    shuffle,
    substitute,
)

from analyzer.bundle import Bundle
from analyzer.results import Analysis
from analyzer.rules.engine import analyze
from analyzer.rules.loading import Rule
from analyzer.verdict import verdict
from k8s.events import count as event_count
from k8s.events import last_time as event_time

SCENARIOS = scenario_names(SAMPLES)

TRANSFORMS: dict[str, Transform] = {
    "rename": rename,
    "events_v1": events_v1,
    "gke": platform("gke"),
    "onprem": platform("onprem"),
    "shuffle": shuffle(seed=7),
    "noise": noise,
    "all": compose(noise, rename, platform("gke"), events_v1, shuffle(seed=11)),
}


def has_fault(name: str, rules: list[Rule]) -> bool:
    """Whether the sample's expected findings include a problem (a finding above a note)."""
    expect = yaml.safe_load((SAMPLES / name / "expect.yaml").read_text(encoding="utf-8"))
    severity = {key: r.severity for r in rules for key in r.manual or (r.id,)}
    return any(
        severity[f.get("manual") or f["rule"]] != "info" for f in expect.get("findings") or []
    )


RENAMING = ("rename", "all")


def unrenamed(analysis: Analysis, variant: Variant) -> list[str]:
    """The names of the objects the sample's findings name that the variant left as they were:
    a renaming that cannot rename one (it is also a container's or an image's name, which
    renaming must not touch) proves nothing about that object, so the sample must change."""
    left = []
    for finding in analysis.findings():
        for ref in finding.objects:
            old, new = ref.split("/")[1:], variant.ref(ref).split("/")[1:]
            left += [
                f"{ref}: {a}"
                for a, b in zip(old, new, strict=True)
                if a == b and a not in FIXED_NAMES
            ]
    return left


@dataclass(frozen=True)
class Outcome:
    findings: frozenset[tuple[str, tuple[str, ...]]]  # (manual key, sorted objects)
    first_root: str | None
    errored: frozenset[str]  # rules that ended in error


def outcome(analysis: Analysis, ref=lambda r: r) -> Outcome:
    """What must not change: every finding's manual keys and objects (mapped by `ref`), the
    first root cause's manual key (the report's first finding), the rules that failed."""
    return Outcome(
        frozenset(
            (key, tuple(sorted(ref(o) for o in f.objects)))
            for f in analysis.findings()
            for key in f.manual or (f.rule_id,)
        ),
        (analysis.roots[0].manual or (analysis.roots[0].rule_id,))[0] if analysis.roots else None,
        frozenset(r.rule_id for r in analysis.results if r.outcome == "error"),
    )


def unindexed(variant: Variant) -> tuple[list[str], list[str]]:
    """Paths the manifest names that the variant lacks, and members it does not name."""
    manifest = json.loads(variant.members["manifest.json"])
    named = {p for a in manifest["artifacts"] for p in a.get("paths") or []}
    held = set(variant.members) - {"manifest.json"}
    return sorted(named - held), sorted(held - named)


@pytest.fixture(scope="module")
def rules() -> list[Rule]:
    return samplekit.rules()


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("name", SCENARIOS)
def test_variant_gives_the_same_findings(
    name: str, transform: str, rules: list[Rule], tmp_path: Path
) -> None:
    analysis = sample(name).analysis
    variant = TRANSFORMS[transform](Variant(dict(members(name))))
    assert unindexed(variant) == ([], []), "members and manifest disagree"
    want = outcome(analysis, variant.ref)
    analyzed = analyze(Bundle.open(variant.write(tmp_path)), rules)
    got = outcome(analyzed)
    assert sorted(got.findings - want.findings) == [], "findings the variant adds"
    assert sorted(want.findings - got.findings) == [], "findings the variant loses"
    assert got.first_root == want.first_root
    assert sorted(got.errored - want.errored) == [], "rules that fail on the variant only"
    if has_fault(name, rules):
        assert verdict(analyzed) == "problems", "a cluster with a fault called healthy"
    if transform in RENAMING:
        assert unrenamed(analysis, variant) == [], "objects a finding names that kept their names"


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_sample_is_called_healthy_only_without_a_fault(name: str, rules: list[Rule]) -> None:
    """The verdict of the sample itself: "problems found" exactly when it has a fault."""
    analysis = sample(name).analysis
    assert (verdict(analysis) == "problems") == has_fault(name, rules)


# ---------------------------------------------------------------- the transforms themselves

RICH = "pending-quota"  # core/v1 and events.k8s.io Events, EKS nodes, a pool, a quota


def _objects(variant: Variant, resource: str) -> list[dict]:
    return [
        o
        for name, data in sorted(variant.members.items())
        if name.startswith(f"objects/{resource}/")
        for o in json.loads(data)["items"]
    ]


def test_rename_leaves_no_chosen_name() -> None:
    rich = dict(members(RICH))
    atoms = name_atoms(rich)
    variant = rename(Variant(rich))
    assert {"tensor-fusion-sys", "ml-team", "tensor-fusion-shared", "llm-serve"} <= set(atoms)
    for name, data in variant.members.items():
        assert substitute(name, dict.fromkeys(atoms, "")) == name
        if name.startswith("objects/"):
            for obj in json.loads(data)["items"]:
                meta = obj["metadata"]
                assert {meta.get("name"), meta.get("namespace")}.isdisjoint(atoms), meta
    tf = json.loads(variant.members["manifest.json"])["tensorfusion"]
    assert (tf["namespace"], tf["release"]) == ("nexus-gpu", "fusion-prod")
    assert variant.ref("Pod/tensor-fusion-sys/tensor-fusion-sys-controller-6b8f9d7c54-9xk2m") == (
        "Pod/nexus-gpu/fusion-prod-controller-6b8f9d7c54-9xk2m"
    )
    assert variant.ref("Pod/tensor-fusion-sys/hypervisor-ip-10-40-160-61.ec2.internal") == (
        "Pod/nexus-gpu/hypervisor-k8s-pool1-node01"
    )


def test_events_v1_keeps_counts_and_times_in_the_new_shape() -> None:
    original = Variant(dict(members(RICH)))
    variant = events_v1(original)
    before = {e["metadata"]["uid"]: e for e in _objects(original, "events")}
    after = _objects(variant, "events")
    assert any(e.get("count") for e in before.values())  # the sample has core/v1 Events
    for event in after:
        assert event["firstTimestamp"] is None and event["lastTimestamp"] is None
        assert "count" not in event and event["source"] == {}
        assert event["eventTime"] and event["reportingComponent"] and event["action"]
        old = before[event["metadata"]["uid"]]
        assert event_count(event) == event_count(old)
        assert event_time(event)[:19] == event_time(old)[:19]


@pytest.mark.parametrize("shape", ["gke", "onprem"])
def test_platform_leaves_no_eks_node(shape: str) -> None:
    original = Variant(dict(members(RICH)))
    variant = platform(shape)(original)
    nodes = _objects(variant, "nodes")
    assert len(nodes) == len(_objects(original, "nodes"))
    text = b"".join(variant.members.values()).decode()
    assert not re.search(r"-eks-|amazonaws|ec2\.internal|aws:///", text)
    for node in nodes:
        labels = node["metadata"]["labels"]
        assert not [k for k in labels if "amazonaws" in k or "aws" in k]
        runtime = node["status"]["nodeInfo"]["containerRuntimeVersion"]
        if shape == "gke":
            assert node["metadata"]["name"].startswith("gke-")
            assert node["spec"]["providerID"].startswith("gce://")
            assert "cloud.google.com/gke-nodepool" in labels
        else:
            assert "providerID" not in node["spec"] and runtime.startswith("cri-o://")
    gpu_nodes = [n for n in nodes if n["metadata"]["labels"].get("nvidia.com/gpu.present")]
    assert len(gpu_nodes) == 2


def test_shuffle_reorders_and_keeps_every_item() -> None:
    original = Variant(dict(members(RICH)))
    variant = shuffle(seed=7)(original)
    pods, again = _objects(original, "pods"), _objects(variant, "pods")
    assert pods != again and sorted(map(json.dumps, pods)) == sorted(map(json.dumps, again))


def test_noise_adds_failing_unrelated_pods_with_their_data() -> None:
    original = Variant(dict(members(RICH)))
    variant = noise(original)
    added = {p["metadata"]["namespace"] for p in _objects(variant, "pods")} - {
        p["metadata"]["namespace"] for p in _objects(original, "pods")
    }
    assert added == {"shop-web", "data-etl", "ingress-nginx"}
    waiting = {
        c["state"].get("waiting", {}).get("reason")
        for p in _objects(variant, "pods")
        for c in p["status"].get("containerStatuses", [])
    }
    assert {"CrashLoopBackOff", "ImagePullBackOff"} <= waiting
    assert any(n.startswith("logs/ingress-nginx/") for n in variant.members)
    assert unindexed(variant) == ([], [])
