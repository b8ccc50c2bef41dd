"""The cuda-oom rows read real out-of-memory reports (oom_messages.yaml) without --exec.

Each real report that states the device's total is placed where a crashed run of the
cuda-oom-vram-limit-message sample has its report, in a pod whose vram-limit is that total: what
TensorFusion's soft limiter shows a pod is its vram-limit as the card. The row
cuda-oom/vram-limit-reached must then fire exactly when the allocation did not fit the memory the
report says was free (or, without a free figure, when the memory in use plus the allocation passed
the total), and a start-up share (vLLM) or an arena is left to cuda-oom/framework-prealloc. The
oracle here reads the corpus's own figures, not the rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bundlekit import read_members
from oomkit import REPORTS, expected
from scenariokit import SAMPLES
from variantkit import Variant

from analyzer.bundle import Bundle
from analyzer.rules.engine import analyze
from analyzer.rules.loading import Rule, load_rules

SAMPLE = "cuda-oom-vram-limit-message"
POD = "llama-finetune-6d9b7f5c8-v4h8n"
LOG = f"logs/ml-team/{POD}/trainer.previous.log"
MARKER = "torch.OutOfMemoryError"
WITH_TOTAL = [e for e in REPORTS if "total" in e["facts"]]


def _should_fire(facts: dict[str, Any]) -> bool:
    if "utilization" in facts or "arena" in facts:
        return False
    if "requested" in facts and "free" in facts:
        return facts["requested"] > facts["free"]
    if "requested" in facts and "in_use" in facts:
        return facts["in_use"] + facts["requested"] > facts["total"]
    return True


def _placed(entry: dict[str, Any], members: dict[str, bytes]) -> dict[str, bytes]:
    """The sample with the report in place of its own, and the pod's vram-request and -limit
    set to the report's total (bytes, a Kubernetes quantity)."""
    out = dict(members)
    log = members[LOG].decode().split("\n")
    at = next(i for i, line in enumerate(log) if MARKER in line)
    out[LOG] = "\n".join(log[:at] + entry["text"].splitlines() + log[at + 1 :]).encode()
    total = str(round(expected(entry)["total"]))
    pods = json.loads(members["objects/pods/ml-team.json"])
    for pod in pods["items"]:
        if pod["metadata"]["name"] == POD:
            annotations = pod["metadata"]["annotations"]
            annotations["tensor-fusion.ai/vram-limit"] = total
            annotations["tensor-fusion.ai/vram-request"] = total
    out["objects/pods/ml-team.json"] = json.dumps(pods).encode()
    return out


@pytest.fixture(scope="module")
def rules() -> list[Rule]:
    return load_rules()


@pytest.fixture(scope="module")
def members() -> dict[str, bytes]:
    return read_members(SAMPLES / f"{SAMPLE}.tar.zst")


def test_there_are_real_reports_of_each_outcome() -> None:
    outcomes = [_should_fire(expected(e)) for e in WITH_TOTAL]
    assert outcomes.count(True) >= 5 and outcomes.count(False) >= 3


@pytest.mark.parametrize("entry", WITH_TOTAL, ids=[e["source"] for e in WITH_TOTAL])
def test_a_report_whose_total_is_the_limit_decides_the_row(
    entry: dict[str, Any], members: dict[str, bytes], rules: list[Rule], tmp_path: Path
) -> None:
    bundle = Bundle.open(Variant(_placed(entry, members)).write(tmp_path))
    found = [
        f for f in analyze(bundle, rules).findings() if f.rule_id == "cuda-oom/vram-limit-reached"
    ]
    facts = expected(entry)
    if not _should_fire(facts):
        assert found == [], f"fired on a report that fit its free memory: {facts['line']}"
        return
    assert [f.objects for f in found] == [[f"Pod/ml-team/{POD}"]]
    [finding] = found
    assert finding.evidence[0] == facts["line"]  # the report, quoted
    assert finding.decisive.startswith("total ")  # the number that decided, first
    assert finding.decisive.endswith(facts["line"])
