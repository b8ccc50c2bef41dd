"""No vacuous truth: a rule fires only when the facts it names are present.

A quantifier over an empty collection is true ("no pool selects this node" holds when there
is no pool at all), so every rule is evaluated on bundles whose collections are empty: the
healthy sample with one collection emptied at a time (collected, and empty), a bundle where
everything is empty, and a cluster where the controller never ran. What may fire is listed
with the fact that makes it true; anything else firing, or any rule ending in error, fails.
The fault samples get the same treatment: an emptied collection may take their findings away,
never add one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import samplekit
import yaml
from samplekit import SAMPLES, members, sample
from scenarioloader import scenario_names

from analyzer.bundle import Bundle
from analyzer.rules.engine import analyze

# The two healthy bases (EKS; GKE with another chart version and events.k8s.io events) and
# their labelled GPU nodes.
BASES = {
    "healthy": ("Node/ip-10-40-160-61.ec2.internal", "Node/ip-10-40-166-115.ec2.internal"),
    "healthy-gke": (
        "Node/gke-ml-prod-l4-pool-9e3b7c4d-2mfx",
        "Node/gke-ml-prod-l4-pool-9e3b7c4d-x8qn",
    ),
}


def _resources(*names: str) -> Callable[[str], bool]:
    return lambda resource: resource in names


EMPTIED: dict[str, tuple[Callable[[str], bool], bool, Callable[[str], set[tuple[str, str]]]]] = {
    # collection emptied: (which objects listings, logs too, what may fire on a base and why)
    "pools": (_resources("gpupools.tensor-fusion.ai"), False, lambda base: set()),
    # The GPU nodes are labelled and a pool selects them, yet they have no GPUNode: a fact.
    "gpunodes": (
        _resources("gpunodes.tensor-fusion.ai"),
        False,
        lambda base: {("baseline/gpunode-not-running", node) for node in BASES[base]},
    ),
    "gpus": (_resources("gpus.tensor-fusion.ai"), False, lambda base: set()),
    "tensorfusion-resources": (
        lambda r: r.endswith(".tensor-fusion.ai"),
        False,
        lambda base: set(),
    ),
    "events": (_resources("events"), False, lambda base: set()),
    "pods": (_resources("pods"), False, lambda base: set()),
    "nodes": (_resources("nodes"), False, lambda base: set()),
    "logs": (lambda r: False, True, lambda base: set()),
    # Nothing at all: no CRDs served either, so TensorFusion is not installed (the fact).
    "everything": (lambda r: True, True, lambda base: {("baseline/tf-not-installed", "")}),
}


@pytest.fixture(scope="module")
def rules():
    return samplekit.rules()


def emptied(name: str, directory: Path, listing: Callable[[str], bool], logs: bool) -> Path:
    """The sample `name` unpacked in `directory` with the chosen listings (and logs) emptied;
    the manifest still says they were collected."""
    manifest = json.loads(members(name)["manifest.json"])
    for member, data in members(name).items():
        path = directory / member
        path.parent.mkdir(parents=True, exist_ok=True)
        parts = member.split("/")
        if parts[0] == "objects" and listing(parts[1]):
            body = json.loads(data)
            body["items"] = []
            data = json.dumps(body).encode()
        elif parts[0] == "logs" and logs:
            data = b""
        path.write_bytes(data)
    if logs:
        for art in manifest["artifacts"]:
            if art["type"] == "log":
                art["lines"] = 0
    if listing("customresourcedefinitions.apiextensions.k8s.io"):
        manifest["tensorfusion"]["installed"] = False
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("collection", EMPTIED)
def test_an_empty_collection_makes_no_rule_fire_without_its_facts(
    collection: str, base: str, tmp_path: Path, rules
) -> None:
    listing, logs, allowed = EMPTIED[collection]
    bundle = emptied(base, tmp_path, listing, logs)
    analysis = analyze(Bundle.open(bundle), rules)
    fired = {(f.rule_id, ",".join(f.objects)) for f in analysis.findings()}
    assert fired == allowed(base)
    assert [r.rule_id for r in analysis.results if r.outcome == "error"] == []


def test_a_controller_that_never_ran_is_the_cause_not_the_pools_it_never_made(rules) -> None:
    """controller-crash-unlisted: no GPUPool, GPUNode, GPU or hypervisor exists because the
    controller never started. No pool selector, hypervisor or GPU is blamed."""
    analysis = sample("controller-crash-unlisted").analysis
    [root] = analysis.roots
    assert root.rule_id == "controller-crash/unexplained-crash"
    assert [c.rule_id for c in root.children] == ["baseline/cluster-not-running"]
    assert "unable to set up time series database" in root.texts["title"]["en"]
    assert [r.rule_id for r in analysis.results if r.outcome == "error"] == []


def _fault_samples() -> list[str]:
    """The samples whose expected findings are not empty."""
    names = []
    for name in scenario_names(SAMPLES):
        expect = yaml.safe_load((SAMPLES / name / "expect.yaml").read_text(encoding="utf-8"))
        if expect.get("findings"):
            names.append(name)
    return names


# What emptying a collection makes true on a fault sample, and may add: no GPUNode for the
# labelled GPU nodes (and so a pool with no node), no pool in the TensorFusionCluster.
NEW_FACTS = {
    "gpunodes": {"baseline/gpunode-not-running", "baseline/pool-not-running"},
    "pools": {"baseline/cluster-not-running"},
    "everything": {"baseline/tf-not-installed"},
}


@pytest.mark.parametrize("collection", EMPTIED)
@pytest.mark.parametrize("name", _fault_samples())
def test_an_empty_collection_adds_no_finding_to_a_fault_sample(
    name: str, collection: str, tmp_path: Path, rules
) -> None:
    """On a sample with a fault, an emptied collection may take findings away (their facts
    are gone), and leave a less specific reading of the same fault in their place (the
    workload catch-all where the log that named the row is gone; registry-unreachable where the
    nodes that said "mainland China" are), but never add a finding about something no finding
    was about, except what the emptied collection itself makes true (NEW_FACTS)."""
    listing, logs, _ = EMPTIED[collection]
    before = sample(name).analysis.findings()
    found = {(f.rule_id, ",".join(f.objects)) for f in before}
    faulty = {thing for f in before for thing in (*f.objects, *f.about)}
    analysis = analyze(Bundle.open(emptied(name, tmp_path, listing, logs)), rules)
    added = sorted(
        (f.rule_id, ",".join(f.objects))
        for f in analysis.findings()
        if (f.rule_id, ",".join(f.objects)) not in found
        and f.rule_id not in NEW_FACTS.get(collection, set())
        and faulty.isdisjoint({*f.objects, *f.about})
    )
    assert added == []
    assert [r.rule_id for r in analysis.results if r.outcome == "error"] == []
