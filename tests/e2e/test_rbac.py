"""A user bound by RoleBindings in two namespaces only still gets a useful bundle.

The emulator denies every resource request outside those namespaces (cluster-wide lists,
nodes, CRDs, TF cluster-scoped objects) like RBAC would; discovery and self-reviews stay open.
"""

from __future__ import annotations

from pathlib import Path

from faultkit import FaultyEmulator
from scenariokit import SAMPLES, analyze_json, collect_scenario, first_root
from scenarioloader import load_scenario

from analyzer.bundle import Bundle

NS = "tensor-fusion-sys"
SCENARIO = "controller-bad-config"


def test_namespace_scoped_user(tmp_path: Path) -> None:
    emu = FaultyEmulator(load_scenario(SAMPLES / SCENARIO))
    emu.faults.add(status=403, outside=(NS, "ml-team"))
    proc, bundle_path, _ = collect_scenario(
        SCENARIO, tmp_path, "--workload-namespace", "ml-team", emulator=emu
    )
    # A bundle with gaps: exit 3, and the summary names what was refused.
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "  forbidden: gpu-discovery/nodes: nodes: " in proc.stderr
    # TensorFusion is found where the user may look, without a word about not finding it.
    assert f"TensorFusion: namespace {NS}, release {NS} (found: " in proc.stderr
    assert "warning" not in proc.stderr
    assert bundle_path.exists()

    bundle = Bundle.open(bundle_path)
    arts = bundle.manifest["artifacts"]

    def status(resource: str, namespace: str | None) -> set[str]:
        return {
            a["status"]
            for a in arts
            if a.get("resource") == resource and a.get("namespace") == namespace
        }

    # Refused calls are recorded with the verb and resource RBAC refused.
    assert status("nodes", None) == {"forbidden"}
    assert status("gpus", None) == {"forbidden"}
    denied = next(a for a in arts if a.get("resource") == "pods" and a.get("namespace") is None)
    assert denied["status"] == "forbidden"
    assert 'cannot list resource "pods"' in denied["message"]
    # Where the user may look, everything was collected: pods namespace by namespace, the
    # controller's logs, the release's ConfigMap.
    assert status("pods", NS) == {"ok"}
    assert status("pods", "ml-team") == {"ok"}
    # Every namespaced list refused cluster-wide is retried in the namespaces allowed.
    assert status("tensorfusionworkloads", None) == {"forbidden"}
    assert status("tensorfusionworkloads", "ml-team") == {"ok"}
    assert status("gpuresourcequotas", "ml-team") == {"ok"}
    assert status("configmaps", NS) == {"ok"}
    controller = bundle.objects("pods", namespace=NS, labels="tensor-fusion.ai/component=operator")
    assert controller
    name = controller[0]["metadata"]["name"]
    log = bundle.log(NS, name, "controller", previous=True)
    assert log is not None and log.collected and log.lines

    # And the analyzer still finds the root cause from what could be read; what could not
    # is listed as a collection gap rather than passed over.
    report = analyze_json(bundle_path, tmp_path / "report.json")
    assert first_root(report) == "controller-crash/global-config-invalid"
    gaps = report["collection_gaps"]
    assert any("nodes" in str(g) and "forbidden" in str(g) for g in gaps)
    skipped = [r for r in report["rules"] if r["outcome"] == "skipped"]
    assert any("forbidden" in r.get("reason", "") for r in skipped)
