"""The first lines each TensorFusion component logged since it started: where the operator and
the hypervisor print their version, the strongest witness of what runs."""

from __future__ import annotations

import json
from pathlib import Path

from scenariokit import collect_scenario, tf_collect

from analyzer.bundle import Bundle

CONTROLLER = ("tensor-fusion-sys", "tensor-fusion-sys-controller-6b8f9d7c54-9xk2m", "controller")


def heads(bundle: Path) -> list[dict]:
    with_manifest = Bundle.open(bundle)
    return [a for a in with_manifest.artifacts if a.get("head")]


def test_the_operator_start_line_is_collected_from_the_first_lines(tmp_path: Path) -> None:
    # With the newest 20 lines kept, the start line is only in the head read.
    proc, bundle, mapping = collect_scenario("healthy", tmp_path, "--tail", "20", in_process=True)
    assert proc.returncode == 0, proc.stderr
    opened = Bundle.open(bundle)
    ns, pod, container = (mapping.get(p, p) for p in CONTROLLER)
    head = opened.log_head(ns, pod, container)
    assert head is not None and head.head and head.status == "ok"
    assert head.lines[0].endswith(
        '"version: 2.17.0, hash: 50519fd223b2f01d294179baa08bff2bca8b6d61, '
        'time: 2026-08-18T07:46:05Z" logger="setup"'
    )
    assert len(head.lines) == 50  # the step's first 50 lines, not the tail
    tail = opened.log(ns, pod, container)
    assert len(tail.lines) == 20 and not any("version: " in line for line in tail.lines)


def test_one_head_read_per_distinct_image(tmp_path: Path) -> None:
    _, bundle, _ = collect_scenario("healthy", tmp_path, in_process=True)
    read = heads(bundle)
    assert {a["step"] for a in read} == {"baseline/start-lines"}
    hypervisors = [a for a in read if a["pod"].startswith("hypervisor-")]
    # Two hypervisor pods run the same image: one of them says which release it is.
    assert [a["container"] for a in hypervisors] == ["tensor-fusion-hypervisor"]
    assert all(a["status"] == "ok" and a["lines"] > 0 for a in read)


def test_the_size_budget_never_trims_the_first_lines(tmp_path: Path) -> None:
    _, bundle, _ = collect_scenario("healthy", tmp_path, "--max-size", "30k", in_process=True)
    manifest = Bundle.open(bundle).manifest
    trimmed = [a for a in manifest["artifacts"] if a.get("trimmed_lines")]
    assert trimmed, "the budget should have trimmed some log"
    assert not [a for a in trimmed if a.get("head")]
    assert json.dumps(heads(bundle))


def test_dry_run_names_the_start_lines_and_image_ids(tmp_path: Path) -> None:
    proc = tf_collect("--dry-run", "-o", str(tmp_path / "x"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (
        "baseline/start-lines: first 50 lines since start of operator|hypervisor containers "
        "(their version line; image tags and IDs come with the pods), one pod per image"
    ) in proc.stdout
