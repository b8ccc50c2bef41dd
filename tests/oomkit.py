"""The corpus of real GPU out-of-memory reports (tests/analyzer/oom_messages.yaml) and the facts
each states, as the tests read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CORPUS = yaml.safe_load(
    (Path(__file__).parent / "analyzer" / "oom_messages.yaml").read_text(encoding="utf-8")
)
REPORTS = [e for e in CORPUS if not e.get("near_miss")]
NEAR_MISSES = [e for e in CORPUS if e.get("near_miss")]
FRAMEWORKS = {
    "pytorch",
    "tensorflow",
    "jax",
    "vllm",
    "onnxruntime",
    "tensorrt",
    "cuda",
    "nccl",
    "limiter",
}
_UNIT = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _bytes(value: Any) -> float:
    """The corpus's size: bytes, or "15.90 GiB", or "22.90 GiB + 194.87 MiB"."""
    if isinstance(value, (int, float)):
        return float(value)
    total = 0.0
    for term in value.split(" + "):
        number, unit = term.split(" ")
        total += float(number) * _UNIT[unit]
    return total


def expected(entry: dict[str, Any]) -> dict[str, Any]:
    lines = entry["text"].splitlines()
    want: dict[str, Any] = {}
    for key, value in entry["facts"].items():
        if key in ("line", "init_failure"):
            want[key] = lines[value - 1]
        elif key in ("framework", "utilization"):
            want[key] = value
        else:
            want[key] = _bytes(value)
    return want
