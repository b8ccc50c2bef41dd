"""The GPU capacity picture never shows a node it cannot vouch for as free: a node whose
hypervisor is down, that has no GPUNode, or whose GPUs are not Running is `unknown` (its
GPUNode status keeps its last numbers), and every GPU node is listed, with numbers or not."""

from __future__ import annotations

import re

from samplekit import report as sample_report

from analyzer.report.render import render


def _rows(report: dict) -> dict[str, str | None]:
    return {row["id"]: row["unknown"] for row in report["views"]["capacity"]}


def _bar_labels(report: dict, node: str) -> list[str]:
    page = render(report, "html")
    row = re.search(
        rf'<div class="cap-row" data-id="GPUNode/{re.escape(node)}">(.*?)\n</div>', page, re.S
    )
    assert row, node
    return re.findall(r'<span class="cap-unit">\w+ </span>([^<]*)</div>', row.group(1))


def test_a_node_whose_hypervisor_is_down_is_unknown_not_free() -> None:
    report = sample_report("gpu-discovery-hypervisor-down")
    down = "ip-10-40-160-61.ec2.internal"
    assert _rows(report) == {
        "GPUPool/tensor-fusion-shared": None,
        f"GPUNode/{down}": "hypervisor: 0/1 CrashLoopBackOff, restarts 4 (58m ago)",
        "GPUNode/ip-10-40-166-115.ec2.internal": None,
    }
    # Its GPUNode still says 500 of 500 TFLOPS available: the picture must not.
    assert (
        _bar_labels(report, down)
        == ["unknown (hypervisor: 0/1 CrashLoopBackOff, restarts 4 (58m ago))"] * 2
    )
    assert _bar_labels(report, "ip-10-40-166-115.ec2.internal")[0] == (
        "460 of 500 available (92.0%)"
    )


def test_every_gpu_node_is_listed_even_without_a_gpunode() -> None:
    rows = _rows(sample_report("gpu-discovery-node-not-labelled"))
    assert rows["GPUNode/ip-10-40-161-25.ec2.internal"] == "hypervisor: no hypervisor pod"
    assert [r for r in rows if r.startswith("GPUNode/")] == [
        "GPUNode/ip-10-40-160-61.ec2.internal",
        "GPUNode/ip-10-40-161-25.ec2.internal",
        "GPUNode/ip-10-40-166-115.ec2.internal",
    ]


def test_a_healthy_cluster_shows_numbers_for_every_node() -> None:
    rows = _rows(sample_report("healthy"))
    assert len(rows) == 3 and set(rows.values()) == {None}
