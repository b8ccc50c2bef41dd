"""A pending pod whose tensor-fusion.ai/gpu-model matches no GPU of its pool: the finding names
the model it asked for and the models the pool has, in both languages, whatever capacity the
pool has free (no free capacity would help, so it is not a capacity finding).

The sample `pod-pending-gpu-not-fit` asks for "NVIDIA L4" in pool tensor-fusion-shared, whose
eight GPUs are NVIDIA A10G. Variants of it (an unpacked copy, objects edited): the pool full,
and the pod asking for the pool's own model (the near miss: another filter is to blame, and
the finding says so without naming a model).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bundlekit import read_members

from analyzer.bundle import Bundle
from analyzer.results import Finding
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
SAMPLE = SAMPLES / "pod-pending-gpu-not-fit.tar.zst"
RULES = load_rules()
POD = "Pod/ml-team/bert-embed-5d8c7f9b64-h7k2p"
PENDING_RULES = {
    "pod-pending/gpu-not-fit",
    "pod-pending/quota-or-capacity",
    "pod-pending/shared-needs-empty-gpu",
}


def findings_about_the_pod(bundle: Path) -> dict[str, Finding]:
    return {
        f.rule_id: f
        for f in analyze(Bundle.open(bundle), RULES).findings()
        if f.rule_id in PENDING_RULES and f.objects == [POD]
    }


def edited(out: Path, resource: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    """An unpacked copy of the sample with `edit` applied to every object of `resource`."""
    for name, data in read_members(SAMPLE).items():
        if name.startswith(f"objects/{resource}/"):
            listing = json.loads(data)
            for item in listing["items"]:
                edit(item)
            data = json.dumps(listing).encode()
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    return out


def test_the_finding_names_the_model_asked_for_and_the_pools_models() -> None:
    found = findings_about_the_pod(SAMPLE)
    assert set(found) == {"pod-pending/gpu-not-fit"}
    finding = found["pod-pending/gpu-not-fit"]
    assert finding.vars["model"] == "NVIDIA L4" and finding.vars["model_missing"] is True
    assert finding.texts["title"] == {
        "en": "Pod ml-team/bert-embed-5d8c7f9b64-h7k2p is Pending: it asks for GPU model"
        " NVIDIA L4; pool tensor-fusion-shared has NVIDIA A10G",
        "zh": "Pod ml-team/bert-embed-5d8c7f9b64-h7k2p 一直 Pending：它要的 GPU 型号是"
        " NVIDIA L4，资源池 tensor-fusion-shared 里只有 NVIDIA A10G",
    }
    explanation = finding.texts["explanation"]
    assert (
        "the pod's tensor-fusion.ai/gpu-model is NVIDIA L4, and no GPU of pool"
        " tensor-fusion-shared is of that model (it has NVIDIA A10G)" in explanation["en"]
    )
    assert (
        "Pod 的 tensor-fusion.ai/gpu-model 是 NVIDIA L4，而资源池 tensor-fusion-shared"
        " 里没有这个型号的 GPU（只有 NVIDIA A10G）" in explanation["zh"]
    )
    assert "one of NVIDIA A10G" in finding.texts["fix"]["en"]
    assert "改成 NVIDIA A10G 之一" in finding.texts["fix"]["zh"]


def _full(gpu: dict[str, Any]) -> None:
    gpu["status"]["available"] = {"compute": "0", "tflops": "0", "vram": "0"}


def test_a_full_pool_still_names_the_model_not_capacity(tmp_path: Path) -> None:
    found = findings_about_the_pod(edited(tmp_path, "gpus.tensor-fusion.ai", _full))
    assert set(found) == {"pod-pending/gpu-not-fit"}
    assert (
        "it asks for GPU model NVIDIA L4" in found["pod-pending/gpu-not-fit"].texts["title"]["en"]
    )


def _asks_for_a10g(pod: dict[str, Any]) -> None:
    annotations = pod["metadata"].get("annotations") or {}
    if "tensor-fusion.ai/gpu-model" in annotations:
        annotations["tensor-fusion.ai/gpu-model"] = "NVIDIA A10G"


def test_a_model_the_pool_has_is_not_named_as_the_cause(tmp_path: Path) -> None:
    found = findings_about_the_pod(edited(tmp_path, "pods", _asks_for_a10g))
    finding = found["pod-pending/gpu-not-fit"]
    assert finding.vars["model_missing"] is False
    assert finding.texts["title"]["en"].endswith(
        "GPUs with enough capacity exist but fail its other GPU filters"
    )
    assert "gpu-model (NVIDIA A10G)" in finding.texts["explanation"]["en"]
    assert "gpu-model（NVIDIA A10G）" in finding.texts["explanation"]["zh"]
