"""The functions rules may call besides CEL's own: Kubernetes quantities, dotted paths,
labels and annotations (their keys contain dots and slashes), regex groups, max and min, and
the facts of GPU discovery the report's discovery chain reads too (which nodes show a GPU,
which node a hypervisor serves, the selector the controller watches GPU nodes by), so the chain
and the findings never disagree about them."""

from __future__ import annotations

import functools
import re
from typing import Any

from k8s import events
from k8s.quantity import quantity
from k8s.selectors import SelectorError, parse_label_selector
from k8s.tensorfusion import gpu_workload, requests_native_gpu
from k8s.times import parse_time

from .oom import gpu_oom, oom_facts


@functools.lru_cache(maxsize=2048)
def _parts(path: str) -> tuple[tuple[str, int | None], ...]:
    return tuple((p, int(p) if p.isdigit() else None) for p in path.split("."))


def dig(obj: Any, path: str, default: Any = None) -> Any:
    """obj at a dotted path ("status.phase"), or default where any step is missing or null
    (the API serves unset fields both ways: events.k8s.io events have `"count": null`)."""
    cur = obj
    for part, number in _parts(path):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and number is not None and number < len(cur):
            cur = cur[number]
        else:
            return default
        if cur is None:
            return default
    return cur


def annotation(obj: Any, key: str) -> str:
    """metadata.annotations[key], or "" when absent (keys contain dots, so dig cannot)."""
    return _meta_value(obj, "annotations", key)


def label(obj: Any, key: str) -> str:
    return _meta_value(obj, "labels", key)


def _meta_value(obj: Any, which: str, key: str) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    values = meta.get(which) if isinstance(meta, dict) else None
    if not isinstance(values, dict):
        return ""
    value = values.get(key, "")
    return value if type(value) is str else str(value)


# A line that reports an error or a crash, in the formats TensorFusion's components and the
# programs on GPU nodes print: klog E/F, Go runtime panics, zap/logrus JSON and console
# levels, logfmt, Python logging and a traceback's final exception line, Rust panics, spdlog
# (TensorFusion's worker and hypervisor). Levels
# in capitals only where the level is not a field: "error" in an info line is not one.
_ERROR_LINE = re.compile(
    r"^[EF]\d{4} "
    r"|^(?:panic|fatal error): "
    r'|"(?:level|severity|lvl|levelname)"\s*:\s*"(?i:error|fatal|panic|dpanic|critical|crit)"'
    r"|\blevel=(?i:error|fatal|panic)\b"
    r"|^(?:\S+\s+){0,3}\[?(?:ERROR|FATAL|CRITICAL|PANIC|DPANIC)\]?(?:[\s:\]]|$)"
    r"|^(?:\w+\.)*\w*(?:Error|Exception)(?::\s|$)"
    r"|^thread '[^']*' panicked at"
    r"|^\[[^\]]*\] \[(?:error|critical|fatal)\]"
)


def error_lines(lines: list[Any]) -> list[str]:
    """The lines of a log that report an error or a crash (see _ERROR_LINE), in order."""
    if not isinstance(lines, list):
        raise TypeError(f"error_lines() takes a list of lines, not {type(lines).__name__}")
    return [line for line in lines if isinstance(line, str) and _ERROR_LINE.search(line)]


def extract(text: str, pattern: str) -> str:
    """The first group of `pattern` (a Python regex) in `text`, or "" when it does not match."""
    found = _regex(pattern).search(text)
    if not found:
        return ""
    return found.group(1) if found.groups() else found.group(0)


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"bad regex {pattern!r}: {exc}") from exc


def bytes_text(value: Any) -> str:
    """A number of bytes as frameworks print it, two decimals in the largest binary unit
    ("16.00 GiB", "82.00 MiB"), so a rule can quote the number that decided in their words."""
    if type(value) not in (int, float):
        raise TypeError(f"bytes_text() of {type(value).__name__}")
    if abs(value) < 1024:
        return f"{value:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if abs(value) < 1024:
            return f"{value:.2f} {unit}"
    return f"{value / 1024:.2f} TiB"


# ------------------------------------------------------------------------- GPU discovery
GPU_NODE_SELECTOR_ENV = "INITIAL_GPU_NODE_LABEL_SELECTOR"
DEFAULT_GPU_NODE_SELECTOR = "nvidia.com/gpu.present=true"
# hypervisor-<node>; some builds name it tf-hypervisor-<node>.
HYPERVISOR_PREFIXES = ("hypervisor-", "tf-hypervisor-")


def gpu_hints(node: Any) -> bool:
    """Whether a node shows an NVIDIA GPU: the nvidia.com/gpu.present label, nvidia.com/gpu
    capacity or tensor-fusion.ai/index_* allocatable resources."""
    labels, capacity, allocatable = (
        value if isinstance(value, dict) else {}
        for value in (
            dig(node, "metadata.labels"),
            dig(node, "status.capacity"),
            dig(node, "status.allocatable"),
        )
    )
    return (
        "nvidia.com/gpu.present" in labels
        or "nvidia.com/gpu" in capacity
        or any(str(k).startswith("tensor-fusion.ai/index_") for k in allocatable)
    )


def hypervisor_nodes(pod: Any) -> set[str]:
    """The nodes a hypervisor pod serves: the one it is bound to, and the one its name says."""
    nodes = {str(dig(pod, "spec.nodeName", ""))}
    name = str(dig(pod, "metadata.name", ""))
    nodes |= {name.removeprefix(p) for p in HYPERVISOR_PREFIXES if name.startswith(p)}
    return nodes - {""}


def hypervisor_of(pod: Any, node: str) -> bool:
    """Whether a hypervisor pod serves the node named `node` (hypervisor_nodes)."""
    return node in hypervisor_nodes(pod)


def gpu_node_selector(operators: Any) -> str:
    """initialGpuNodeLabelSelector: the first non-empty INITIAL_GPU_NODE_LABEL_SELECTOR env of
    the operator pods' containers; unset or empty, the controller uses its default."""
    for pod in operators if isinstance(operators, list) else []:
        for container in dig(pod, "spec.containers", []):
            for env in dig(container, "env", []):
                if dig(env, "name") == GPU_NODE_SELECTOR_ENV and dig(env, "value", ""):
                    return str(env["value"])
    return DEFAULT_GPU_NODE_SELECTOR


def selects(selector: str, obj: Any) -> bool:
    """Whether a label selector (kubectl's -l syntax) selects the object by its labels. An
    invalid one selects nothing: the controller does not start with it."""
    try:
        parsed = parse_label_selector(selector)
    except SelectorError:
        return False
    labels = dig(obj, "metadata.labels", {})
    return parsed.matches(labels if isinstance(labels, dict) else {})


def label_keys(selector: str) -> list[str]:
    """The label keys a selector's requirements name, sorted ([] for an invalid one)."""
    try:
        return [r.key for r in parse_label_selector(selector).requirements]
    except SelectorError:
        return []


def minutes_between(start: Any, end: Any) -> int:
    """Whole minutes from `start` to `end`, times as Kubernetes writes them (RFC 3339); -1
    when either is no time, so a rule's `> n` holds only on two real times."""
    a, b = parse_time(start), parse_time(end)
    return int((b - a).total_seconds() // 60) if a and b else -1


def _max(values: list[Any], default: Any = 0.0) -> Any:
    return max(values) if values else default


def _min(values: list[Any], default: Any = 0.0) -> Any:
    return min(values) if values else default


def _sum(values: list[Any]) -> float:
    """The sum of a list of numbers (CEL has no sum): 0.0 for an empty list."""
    if not isinstance(values, list):
        raise TypeError(f"sum() takes a list, not {type(values).__name__}")
    total = 0.0
    for v in values:
        if type(v) not in (int, float):
            raise TypeError(f"sum() of a list holding {type(v).__name__}")
        total += v
    return total


FUNCTIONS = {
    "quantity": quantity,
    "dig": dig,
    # An Event's count and last time, read as the bundle orders Events (k8s/events.py).
    "event_count": events.count,
    "event_time": events.last_time,
    "annotation": annotation,
    "label": label,
    "extract": extract,
    "error_lines": error_lines,
    "gpu_oom": gpu_oom,
    "bytes_text": bytes_text,
    "oom_facts": oom_facts,
    "requests_native_gpu": requests_native_gpu,
    "gpu_workload": gpu_workload,
    "gpu_hints": gpu_hints,
    "hypervisor_of": hypervisor_of,
    "gpu_node_selector": gpu_node_selector,
    "selects": selects,
    "label_keys": label_keys,
    "minutes_between": minutes_between,
    "max": _max,
    "min": _min,
    "sum": _sum,
}
