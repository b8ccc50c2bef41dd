"""The report's views of the cluster: kubectl's own output for the baseline commands, the
discovery chain per GPU node, capacity per pool and node, and the Warning events."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from bundlekit import make_bundle
from emulatorkit import KUBECTL

from analyzer.bundle import Bundle
from analyzer.report import views
from analyzer.report.render import kubectl_output
from analyzer.results import Finding
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules
from analyzer.serve import cluster_from_bundle
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
NS = "tensor-fusion-sys"
TF = "tensor-fusion.ai"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


# ------------------------------------------------------------------------------ kubectl parity
@pytest.mark.skipif(not shutil.which(KUBECTL), reason="kubectl is not installed")
@pytest.mark.parametrize(
    "sample", ["gpu-discovery-two-nodes", "gpu-discovery-used-by-native", "healthy"]
)
def test_baseline_views_print_what_kubectl_prints(sample: str, tmp_path: Path) -> None:
    bundle = Bundle.open(SAMPLES / f"{sample}.tar.zst")
    with Emulator(cluster_from_bundle(bundle)) as emu:
        kubeconfig = tmp_path / "kubeconfig"
        emu.write_kubeconfig(kubeconfig, namespace=bundle.tf_namespace)
        before = views.kubectl_views(bundle, datetime.now(timezone.utc))
        printed = []
        for view in before:
            argv = shlex.split(view["command"])
            proc = subprocess.run(
                [KUBECTL, "--kubeconfig", str(kubeconfig), *argv[1:]],
                capture_output=True,
                text=True,
                timeout=60,
            )
            printed.append((proc.stdout + proc.stderr).rstrip("\n"))
        after = views.kubectl_views(bundle, datetime.now(timezone.utc))
    for i, text in enumerate(printed):
        # Ages count from now here, like kubectl's; an age may tick over during the call.
        assert text in (kubectl_output(before[i]), kubectl_output(after[i])), before[i]["command"]


def test_big_tables_keep_their_first_rows_and_the_total(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(views, "MAX_TABLE_ROWS", 2)
    items = [gpu(f"gpu-{i}", "n1") for i in range(5)]
    bundle = Bundle.open(make_bundle(tmp_path / "b.tar.zst", objects={(TF, "gpus"): items}))
    columns = views.kubectl_views(bundle, NOW)[2]["tables"][0]
    assert [row[0] for row in columns["rows"]] == ["gpu-0", "gpu-1"]
    assert columns["rows_total"] == 5


def test_ages_count_from_the_collection_not_from_today() -> None:
    bundle = Bundle.open(SAMPLES / "hypervisor-crashloop-recreate.tar.zst")
    pods = views.build_views(bundle, ())["kubectl"][1]
    assert pods["command"] == f"kubectl get pods -n {NS} -o wide"
    age = pods["tables"][0]["columns"].index("AGE")
    assert {row[age] for row in pods["tables"][0]["rows"]} == {"61m", "98m"}


def test_without_tensorfusion_kubectl_knows_no_such_type() -> None:
    bundle = Bundle.open(SAMPLES / "baseline-tf-not-installed.tar.zst")
    tf, pods, gpus = views.build_views(bundle, ())["kubectl"]
    assert (
        kubectl_output(tf)
        == 'error: the server doesn\'t have a resource type "tensorfusioncluster"'
    )
    assert kubectl_output(gpus) == 'error: the server doesn\'t have a resource type "gpu"'
    assert kubectl_output(pods) == f"No resources found in {NS} namespace."
    # No CRDs: the GPU nodes have no GPUNode (not "not collected": there is none to collect),
    # the link baseline/tf-not-installed blames.
    findings = analyze(bundle, load_rules(None)).findings()
    for chain in views.build_views(bundle, findings)["discovery"]:
        assert chain["first_broken"] == 1
        assert chain["links"][1]["reason"] == "missing"
        assert chain["links"][1]["finding"] == "baseline/tf-not-installed@-"


# ------------------------------------------------------------------------------ discovery
def node(name: str, *, labelled: bool = True, ready: str = "True", gpus: int = 0) -> dict:
    labels = {"nvidia.com/gpu.present": "true"} if labelled else {}
    status = {"conditions": [{"type": "Ready", "status": ready}]}
    if gpus:
        status["capacity"] = {"nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": labels}, "status": status}


def gpunode(name: str, phase: str = "Running", **status: object) -> dict:
    return {"metadata": {"name": name}, "status": {"phase": phase, **status}}


def hypervisor(node_name: str, *, ready: bool = True) -> dict:
    cs = {
        "name": "tensor-fusion-hypervisor",
        "ready": ready,
        "restartCount": 0 if ready else 7,
        "state": {"running": {}} if ready else {"waiting": {"reason": "CrashLoopBackOff"}},
    }
    return {
        "metadata": {
            "name": f"hypervisor-{node_name}",
            "namespace": NS,
            "labels": {f"{TF}/component": "hypervisor"},
            "creationTimestamp": "2026-11-30T08:00:00Z",
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "tensor-fusion-hypervisor"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [cs],
            "conditions": [{"type": "Ready", "status": str(ready)}],
        },
    }


def gpu(name: str, node_name: str, phase: str = "Running", used_by: str = "tensor-fusion") -> dict:
    return {
        "metadata": {"name": name, "labels": {f"{TF}/managed-by": node_name}},
        "status": {
            "phase": phase,
            "usedBy": used_by,
            "gpuModel": "NVIDIA A10G",
            "capacity": {"tflops": "125", "vram": "23028Mi"},
        },
    }


def chains(tmp_path: Path, objects: dict, failed: list | None = None, findings: tuple = ()) -> dict:
    bundle = Bundle.open(make_bundle(tmp_path / "b.tar.zst", objects=objects, failed=failed))
    return {c["node"]: c for c in views.discovery(bundle, NOW, findings)}


def blame(row: str, node: str | None = None) -> Finding:
    """A finding of manual row `row` about `node` (None: about the controller)."""
    about = f"Node/{node}" if node else "Component/operator"
    return Finding(
        rule_id=row,
        manual=(row,),
        severity="error",
        section=row.split("/")[0],
        objects=[about],
        evidence=[],
        texts={},
        commands=[],
        vars={},
        about=frozenset({about}),
    )


def firsts(got: dict) -> dict:
    """Per node, the first broken link's index and reason (None when nothing is broken)."""
    return {
        name: (c["first_broken"], c["links"][c["first_broken"]]["reason"])
        if c["first_broken"] is not None
        else None
        for name, c in got.items()
    }


CLUSTER = {
    ("", "nodes"): [
        node("cpu-only", labelled=False),
        node("unlabelled", labelled=False, gpus=4),
        node("no-gpunode"),
        node("no-hypervisor"),
        node("crashing"),
        node("no-gpus"),
        node("native"),
        node("healthy"),
        node("not-ready", ready="False"),
    ],
    (TF, "gpunodes"): [
        gpunode("no-hypervisor", "Pending"),
        gpunode("crashing", "Pending"),
        gpunode("no-gpus"),
        gpunode("native"),
        gpunode("healthy"),
        gpunode("not-ready", "Pending"),
        gpunode("gone"),  # its Node was deleted
    ],
    ("", "pods"): [hypervisor(n) for n in ("no-gpus", "native", "healthy", "gone")]
    + [hypervisor("crashing", ready=False), hypervisor("not-ready", ready=False)],
    (TF, "gpus"): [
        gpu("gpu-1", "native", used_by="nvidia-device-plugin"),
        gpu("gpu-2", "healthy"),
        gpu("gpu-3", "gone"),
    ],
}
BLAMES = (
    blame("gpu-discovery/node-not-labelled", "unlabelled"),
    blame("gpu-discovery/pool-selector-mismatch", "no-gpunode"),
    blame("baseline/hypervisor-missing", "no-hypervisor"),
    blame("hypervisor-not-ready/unexplained-crash", "crashing"),
    blame("gpu-discovery/no-devices", "no-gpus"),
    blame("gpu-discovery/used-by-native", "native"),
)


def test_without_findings_nothing_is_broken_and_the_facts_show(tmp_path: Path) -> None:
    got = chains(tmp_path, CLUSTER)
    assert firsts(got) == dict.fromkeys(got)
    states = {name: [link["state"] for link in c["links"]] for name, c in got.items()}
    assert states["healthy"] == ["ok"] * 4
    assert states["crashing"] == ["ok", "waiting", "waiting", "waiting"]
    assert got["unlabelled"]["links"][0] == {
        "kind": "node",
        "state": "waiting",
        "name": "unlabelled",
        "facts": "Ready=True, not selected by -l nvidia.com/gpu.present=true",
        "reason": None,
        "finding": None,
    }  # "cpu-only" has no GPU: not a GPU node
    assert "cpu-only" not in got


def test_discovery_chain_marks_the_link_a_finding_blames(tmp_path: Path) -> None:
    got = chains(tmp_path, CLUSTER, findings=BLAMES)
    assert firsts(got) == {
        "unlabelled": (0, "not_labelled"),
        "no-gpunode": (1, "missing"),
        "no-hypervisor": (2, "missing"),
        "crashing": (2, "not_ready"),
        "no-gpus": (3, "missing"),
        "native": (3, "used_by_other"),
        "healthy": None,
        "not-ready": None,  # no rule blames a node that is not Ready
        "gone": None,  # nor a GPUNode whose Node was deleted
    }
    # A GPUNode is Pending while its hypervisor is down: that link waits, the hypervisor broke.
    crashing = got["crashing"]["links"]
    assert [link["state"] for link in crashing] == ["ok", "waiting", "broken", "waiting"]
    assert crashing[2]["facts"] == "0/1 CrashLoopBackOff, restarts 7"
    assert crashing[2]["finding"] == "hypervisor-not-ready/unexplained-crash@Node/crashing"


def test_a_finding_about_no_node_blames_only_links_that_are_not_fine(tmp_path: Path) -> None:
    got = chains(tmp_path, CLUSTER, findings=(blame("hypervisor-not-ready/pod-security"),))
    assert firsts(got) == {
        **dict.fromkeys(got),
        "unlabelled": (2, "missing"),
        "no-gpunode": (2, "missing"),
        "no-hypervisor": (2, "missing"),
        "crashing": (2, "not_ready"),
        "not-ready": (2, "not_ready"),
    }


def test_a_finding_may_blame_a_link_whose_facts_look_fine(tmp_path: Path) -> None:
    got = chains(tmp_path, CLUSTER, findings=(blame("baseline/gpu-capacity-missing", "healthy"),))
    link = got["healthy"]["links"][3]
    assert (link["state"], link["reason"], link["facts"]) == ("broken", None, "1 Running")


@pytest.mark.parametrize(
    ("sample", "broken"),
    [
        # The T4 node carries the selector's label with another value: left out on purpose.
        ("near-miss-gpu-node-cordoned", {}),
        (
            "gpu-discovery-two-nodes",
            {
                "ip-10-40-161-25.ec2.internal": (
                    "node",
                    "gpu-discovery/node-not-labelled@Node/ip-10-40-161-25.ec2.internal",
                ),
                "ip-10-40-166-115.ec2.internal": (
                    "hypervisor",
                    "hypervisor-not-ready/unexplained-crash@Pod/tensor-fusion-sys/"
                    "hypervisor-ip-10-40-166-115.ec2.internal",
                ),
            },
        ),
    ],
)
def test_samples_break_where_their_findings_say(sample: str, broken: dict) -> None:
    bundle = Bundle.open(SAMPLES / f"{sample}.tar.zst")
    findings = analyze(bundle, load_rules(None)).findings()
    got = {}
    for chain in views.build_views(bundle, findings)["discovery"]:
        if chain["first_broken"] is not None:
            link = chain["links"][chain["first_broken"]]
            got[chain["node"]] = (link["kind"], link["finding"])
    assert got == broken


def test_discovery_chain_says_what_was_not_collected(tmp_path: Path) -> None:
    forbidden = {
        "id": "objects:gpunodes.tensor-fusion.ai",
        "step": "baseline",
        "type": "objects",
        "status": "forbidden",
        "message": "gpunodes.tensor-fusion.ai is forbidden",
        "group": TF,
        "version": "v1",
        "resource": "gpunodes",
        "kind": "GPUNode",
        "namespaced": False,
        "namespace": None,
        "paths": [],
    }
    got = chains(
        tmp_path,
        {
            ("", "nodes"): [node("n1")],
            ("", "pods"): [hypervisor("n1")],
            (TF, "gpus"): [gpu("gpu-1", "n1")],
        },
        failed=[forbidden],
    )
    link = got["n1"]["links"][1]
    assert (link["state"], link["reason"]) == ("unknown", "not_collected")
    assert "forbidden" in link["facts"]
    assert got["n1"]["first_broken"] is None


# ------------------------------------------------------------------------------ capacity
def test_capacity_of_pools_and_nodes(tmp_path: Path) -> None:
    pool = {
        "metadata": {"name": "tensor-fusion-shared"},
        "status": {
            "phase": "Running",
            "totalTFlops": "1k",
            "availableTFlops": "165160m",
            "totalVRAM": "184224Mi",
            "availableVRAM": "bad",
        },
    }
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={(TF, "gpupools"): [pool], (TF, "gpunodes"): [gpunode("n1")]},
    )
    rows = views.build_views(Bundle.open(path), ())["capacity"]
    assert [r["id"] for r in rows] == ["GPUPool/tensor-fusion-shared", "GPUNode/n1"]
    assert rows[0]["tflops"] == {
        "total": 1000,
        "available": 165.16,
        "total_text": "1k",
        "available_text": "165160m",
    }
    assert rows[0]["vram"]["total"] == 184224 * 2**20 and rows[0]["vram"]["available"] is None
    assert rows[1]["tflops"]["total"] is None  # not reported: unknown, not zero
    assert rows[0]["unknown"] is None
    # Its hypervisor pods were not collected: its numbers cannot be vouched for.
    assert rows[1]["unknown"] == "hypervisor: pods in tensor-fusion-sys was not collected"


# ------------------------------------------------------------------------------ warnings
def event(name: str, reason: str, last: str, *, kind: str = "Warning", count: int = 1) -> dict:
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "type": kind,
        "reason": reason,
        "message": f"{reason} happened",
        "count": count,
        "firstTimestamp": "2026-11-30T09:00:00Z",
        "lastTimestamp": last,
        "involvedObject": {"kind": "Pod", "namespace": "ml", "name": "p"},
    }


def test_warning_events_in_time_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(views, "MAX_WARNINGS", 2)
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={
            ("", "events"): [
                event("e1", "BackOff", "2026-11-30T09:30:00Z", count=5),
                event("e2", "FailedScheduling", "2026-11-30T09:10:00Z"),
                event("e3", "Scheduled", "2026-11-30T09:20:00Z", kind="Normal"),
                event("e4", "FailedMount", "2026-11-30T09:40:00Z"),
            ]
        },
    )
    got = views.warning_events(Bundle.open(path), NOW)
    assert got["total"] == 3
    assert [(e["id"], e["reason"], e["count"]) for e in got["events"]] == [
        ("Event/ml/e1", "BackOff", 5),
        ("Event/ml/e4", "FailedMount", 1),
    ]
    assert got["start"] == int(datetime(2026, 11, 30, 9, tzinfo=timezone.utc).timestamp())
    assert got["end"] == int(NOW.timestamp())
