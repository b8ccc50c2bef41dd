"""What a GPU out-of-memory report in a workload's log says.

The analyzer knows a pod ran out of GPU memory from one line; the manual's row depends on the
numbers in the message. Under TensorFusion's soft isolation the limiter answers cuMemGetInfo
with the pod's vram-limit as the card's total, so PyTorch's "GPU 0 has a total capacity of
16.00 GiB" on a pod limited to 16Gi already says the pod hit its own limit; an arena a
framework reserved up front (TensorFlow, JAX, vLLM) followed by a failing library says
pre-allocation. `gpu_oom` decides whether one line is such a report (rules/_functions.yaml's
`cuda_oom` calls it); `oom_facts` reads the last report of a log into plain numbers. The
wordings come from the frameworks' sources and from real logs: tests/analyzer/oom_messages.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

# One line reporting that a GPU allocation failed, in the wordings of: PyTorch's caching
# allocator (1.x and 2.x) and its cudaMallocAsync backend; CUDA runtime/driver errors as
# PyTorch, numba, thrust and others raise them; cuBLAS/cuDNN allocation failures; ONNX
# Runtime's CUDA_CALL and BFCArena; NCCL; TensorFlow (the op's OOM, the BFC allocator's
# failure); XLA/JAX (RESOURCE_EXHAUSTED); vLLM's start-up check; TensorRT 7 to 10 and
# TensorRT-LLM; TensorFusion's limiter.
_OOM = re.compile(
    r"CUDA out of memory"
    r"|torch\.(?:cuda\.)?OutOfMemoryError"
    r"|would exceed allowed memory\. \(out of memory\)"
    r"|(?i:CUDA (?:driver )?error): out of memory"
    r"|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation"
    r"|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED"
    r"|CUDA failure \d+: out of memory"
    r"|Cuda failure (?:\d+ )?'out of memory'"
    r"|OOM when allocating tensor"
    r"|(?i:ran out of memory trying to allocate)"
    r"|(?:RESOURCE_EXHAUSTED|Resource exhausted): (?:Out of memory|Failed to allocate request)"
    r"|(?:ResourceExhaustedError|RESOURCE_EXHAUSTED): failed to allocate memory"
    r"|less than desired GPU memory utilization"
    r"|Failed to allocate memory for requested buffer of size"
    r"|Error Code 1: Cuda Runtime \(out of memory\)|Error Code 2: OutOfMemory"
    r"|Requested amount of GPU memory \(\d+ bytes\) could not be allocated"
    r"|Cuda Error in [\w:]+: 2 \(out of memory\)"
    r"|Allocation denied by limiter"
)
# Look like one and are not: TensorFlow's BFC warning about an optional allocation ("The
# caller indicates that this is not a failure"), and CUDA_ERROR_OUT_OF_MEMORY from pinned
# *host* memory ("failed to alloc N bytes on host"), which is the node's RAM.
_NOT_OOM = re.compile(r"this is not a failure|\bon host\b")

# A framework's reservation made up front, before any failure.
_ARENA = re.compile(
    r"Created (?:TensorFlow )?device \(?\S+ with \d+ MB memory"
    r"|XLA backend allocating .*? on device \d+ for BFCAllocator"
    r"|total_gpu_memory \(.*?\) x gpu_memory_utilization"
    r"|total_gpu_memory=.*gpu_memory_utilization="
)
# A library that failed to start: after an arena this is how pre-allocation shows.
_INIT_FAILURE = re.compile(
    r"(?i:could not create cudnn handle): CUDNN_STATUS_\w+"
    r"|failed to create cublas handle: CUBLAS_STATUS_\w+"
    r"|DNN library initialization failed"
    r"|Failed to get convolution algorithm\. This is probably because cuDNN failed to initialize"
)
# Lines of an allocator's dump that hold no number we read but belong to the report around
# them (a BFC dump can run to thousands of chunk lines between the failure and its Stats).
_DUMP = re.compile(
    r"bfc_allocator|bfc_arena|BFCArena|Stats:\s*$"
    r"|^\s*(?:MaxInUse|NumAllocs|MaxAllocSize|Reserved|PeakReserved|LargestFreeBlock):\s+\d+\s*$"
)
# How far apart (in lines) two lines of one report may be.
NEAR = 60

# Whose wording a line is, first match first: a wrapper's prefix (vLLM's logger, torchrun's
# [rank0]:) does not change it, and what no framework claims is the CUDA API's or a library's.
_FRAMEWORKS = (
    ("limiter", r"Allocation denied by limiter"),
    ("nccl", r"\bNCCL\b|Cuda failure (?:\d+ )?'"),
    ("vllm", r"less than desired GPU memory utilization|warming up sampler|total_gpu_memory"),
    ("pytorch", r"torch\.|Tried to allocate|by PyTorch|would exceed allowed memory"),
    (
        "tensorrt",
        r"\[TRT|TensorRT|Error Code \d+: (?:Cuda Runtime|OutOfMemory)"
        r"|Requested amount of GPU memory|Cuda Error in [\w:]+: 2 \(out of memory\)",
    ),
    ("onnxruntime", r"onnxruntime|ONNXRuntimeError|BFCArena|requested buffer of size"),
    (
        "jax",
        r"jaxlib|\bjax\b|XlaRuntimeError|external/(?:org_tensorflow|xla|tsl)/"
        r"|Failed to allocate request for|Out of memory (?:while trying to )?allocat|XLA backend",
    ),
    (
        "tensorflow",
        r"tensorflow|OOM when allocating tensor|GPU_\d+_bfc|(?i:ran out of memory trying to allocate)"
        r"|ResourceExhaustedError|Created (?:TensorFlow )?device",
    ),
)
_FRAMEWORK = [(name, re.compile(pattern)) for name, pattern in _FRAMEWORKS]

# Units: every framework here means binary multiples, whatever it writes. PyTorch's
# format_size and TensorFlow's HumanReadableNumBytes print KiB/MiB/GiB (2**10...);
# TensorFlow's "with N MB memory" is bytes >> 20; vLLM divides by GiB_bytes = 2**30.
_UNITS = {"b": 1, "bytes": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = r"\d+(?:\.\d+)? ?(?:bytes|[KMGT]i?B|B)\b"
_SIZE_PARTS = re.compile(r"(\d+(?:\.\d+)?) ?(bytes|[KMGT]i?B|B)")
_NUM = r"\d+(?:\.\d+)?"


def _size(text: str) -> float:
    """Bytes in "15.90 GiB", "29.91MiB", "0 bytes", "6727663616B"."""
    found = _SIZE_PARTS.fullmatch(text)
    if found is None:
        raise ValueError(f"not a size: {text!r}")
    number, unit = found.groups()
    return float(number) * _UNITS["bytes" if unit == "bytes" else unit[0].lower()]


def gpu_oom(line: str) -> bool:
    """Whether one log line reports a failed GPU allocation (see _OOM). Not Java's or Python's
    MemoryError, not TensorFlow's "this is not a failure" warning, not pinned host memory,
    not NCCL failures of other kinds, not a sentence that only mentions running out of
    memory (vLLM's advice, TensorFlow's garbage-collection notice)."""
    if not isinstance(line, str):
        raise TypeError(f"gpu_oom() takes a log line, not {type(line).__name__}")
    return _OOM.search(line) is not None and _NOT_OOM.search(line) is None


# ------------------------------------------------------------------------ numbers per wording

Numbers = dict[str, float | None]


def _pytorch(line: str) -> Numbers | None:
    """PyTorch's caching allocator: 1.x "(GPU 0; T total capacity; A already allocated; F free;
    [L allowed; ]R reserved in total by PyTorch)" (1.0-1.3: "C cached" = reserved - allocated),
    2.x "GPU 0 has a total capacity of T of which F is free. [Process N has|Including
    non-PyTorch memory, this process has] U memory in use. [L allowed; ]Of the allocated
    memory A is allocated by PyTorch, [with P allocated in private pools ..., ]and C is
    reserved by PyTorch but unallocated." Keys it can state and does not are None."""
    old = re.search(
        rf"\(GPU \d+; ({_SIZE}) total capacity; ({_SIZE}) already allocated; ({_SIZE}) free; "
        rf"(?:({_SIZE}) allowed; )?(?:({_SIZE}) reserved in total by PyTorch|({_SIZE}) cached)",
        line,
    )
    new = re.search(
        rf"GPU \d+ has a total capac(?:i)?ty of ({_SIZE}) of which ({_SIZE}) is free", line
    )
    if not old and not new:
        return None
    got: Numbers = dict.fromkeys(("requested", "total", "free", "in_use", "reserved", "limit"))
    if asked := re.search(rf"Tried to allocate ({_SIZE})", line):
        got["requested"] = _size(asked[1])
    if old:
        total, allocated, free, allowed, reserved, cached = old.groups()
        got.update(total=_size(total), free=_size(free), in_use=_size(allocated))
        got["reserved"] = _size(reserved) if reserved else _size(allocated) + _size(cached)
        got["limit"] = _size(allowed) if allowed else None
        return got
    got.update(total=_size(new[1]), free=_size(new[2]))
    if allowed := re.search(rf"({_SIZE}) allowed; ", line):
        got["limit"] = _size(allowed[1])
    held = re.search(
        rf"Of the allocated memory ({_SIZE}) is allocated by PyTorch, (?:with {_SIZE} allocated "
        rf"in private pools \(e\.g\., CUDA Graphs\), )?and ({_SIZE}) is reserved by PyTorch",
        line,
    )
    if held:
        got["reserved"] = _size(held[1]) + _size(held[2])
    own = re.search(rf"this process has ({_SIZE}) memory in use", line)
    others = re.findall(rf"Process \d+ has ({_SIZE}) memory in use", line)
    if own:
        got["in_use"] = _size(own[1])
    elif len(others) == 1:  # the failing process has a context, so a lone one is itself
        got["in_use"] = _size(others[0])
    elif held:
        got["in_use"] = _size(held[1])
    return got


def _pytorch_async(line: str) -> Numbers | None:
    """PyTorch's cudaMallocAsync backend, its report on one line (as a launcher quotes it
    with literal \\n): "would exceed allowed memory. (out of memory)\\nCurrently allocated :
    U\\nRequested : R\\nDevice limit : T\\nFree (according to CUDA): F\\nPyTorch limit (set
    by user-supplied memory fraction)\\n : L"; "Device limit" is cudaMemGetInfo's total."""
    if "would exceed allowed memory" not in line:
        return None
    got: Numbers = dict.fromkeys(("in_use", "requested", "total", "free", "limit"))
    labels = (
        ("in_use", r"Currently allocated\s*: "),
        ("requested", r"Requested\s*: "),
        ("total", r"Device limit\s*: "),
        ("free", r"Free \(according to CUDA\): "),
        ("limit", r"PyTorch limit \(set by user-supplied memory fraction\)(?:\\n|\s)*: "),
    )
    for key, label in labels:
        if found := re.search(rf"{label}({_SIZE})", line):
            got[key] = _size(found[1])
    return got


def _vllm(line: str) -> Numbers | None:
    """vLLM V1 at start-up: "Free memory on device [cuda:0 ](F/T GiB) on startup is less
    than desired GPU memory utilization (U, R GiB)": R = U x T, the share it would reserve."""
    found = re.search(
        rf"Free memory on device(?: \S+)? \(({_NUM})/({_NUM}) GiB\) on startup is less than "
        rf"desired GPU memory utilization \(({_NUM}), ({_NUM}) GiB\)",
        line,
    )
    if not found:
        return None
    free, total, share, requested = (float(v) for v in found.groups())
    return {
        "free": free * 2**30,
        "total": total * 2**30,
        "utilization": share,
        "requested": requested * 2**30,
    }


def _one(key: str, pattern: str) -> Callable[[str], Numbers | None]:
    """A wording that states one number, in bytes, as the first group of `pattern`."""
    compiled = re.compile(pattern)

    def parse(line: str) -> Numbers | None:
        found = compiled.search(line)
        return {key: float(found[1])} if found else None

    return parse


def _bfc(line: str) -> Numbers | None:
    """The BFC allocator's failure (TensorFlow, XLA): "ran out of memory trying to allocate
    3.07GiB (rounded to 3300000000)": the rounded size when given (what it tried), else the
    human-readable one."""
    found = re.search(
        rf"(?i:ran out of memory trying to allocate) ({_SIZE})(?: \(rounded to (\d+)\))?", line
    )
    if not found:
        return None
    return {"requested": float(found[2]) if found[2] else _size(found[1])}


def _limiter(line: str) -> Numbers | None:
    """TensorFusion's limiter: "used (U) + request (R) > limit (L)", bytes of the pod."""
    found = re.search(r"used \((\d+)\) \+ request \((\d+)\) > limit \((\d+)\)", line)
    if not found:
        return None
    used, request, limit = (float(v) for v in found.groups())
    return {"in_use": used, "requested": request, "limit": limit}


def _xla_memory(line: str) -> Numbers | None:
    """XLA's cuda_dnn after a cuDNN failure: "Memory usage: F bytes free, T bytes total."."""
    found = re.search(r"Memory usage: (\d+) bytes free, (\d+) bytes total", line)
    return {"free": float(found[1]), "total": float(found[2])} if found else None


_PARSERS: tuple[Callable[[str], Numbers | None], ...] = (
    _pytorch,
    _pytorch_async,
    _vllm,
    _bfc,
    _limiter,
    _xla_memory,
    # TensorFlow's StreamExecutor: "failed to allocate 32.00M (33554432 bytes) from device".
    _one("requested", r"failed to allocate \S+ \((\d+) bytes\) from device"),
    # XLA: "Out of memory while trying to allocate N bytes", "Out of memory allocating N bytes",
    # "Failed to allocate request for 6.27GiB (6727663616B)".
    _one("requested", r"Out of memory (?:while trying to allocate|allocating) (\d+) bytes"),
    _one("requested", r"Failed to allocate request for \S+ \((\d+)B\)"),
    # ONNX Runtime's BFCArena.
    _one("requested", r"Failed to allocate memory for requested buffer of size (\d+)"),
    # TensorRT: "Requested amount of GPU memory (N bytes)", "OutOfMemory (Requested size was N bytes.)".
    _one("requested", r"Requested amount of GPU memory \((\d+) bytes\)"),
    _one("requested", r"OutOfMemory \(Requested size was (\d+) bytes"),
    # NCCL, after its "Cuda failure 'out of memory'".
    _one("requested", r"Failed to CUDA (?:calloc|malloc) (\d+) bytes"),
    # The Stats block of a BFC dump (TensorFlow, XLA, ONNX Runtime): "Limit: N", "InUse: N".
    _one("limit", r"(?:^|\s)Limit:\s+(\d+)\s*$"),
    _one("in_use", r"(?:^|\s)InUse:\s+(\d+)\s*$"),
)


def _numbers(line: str) -> Numbers:
    got: Numbers = {}
    if _NOT_OOM.search(line):
        return got
    for parse in _PARSERS:
        for key, value in (parse(line) or {}).items():
            if got.get(key) is None:
                got[key] = value
    return got


def _arena(line: str) -> dict[str, float]:
    """What an arena line states: TensorFlow "Created [TensorFlow ]device ... with N MB
    memory" (N = bytes >> 20), XLA "XLA backend allocating [3.89GiB (]N bytes[)] on device 0
    for BFCAllocator" (not "will use up to", which reserves nothing), vLLM "total_gpu_memory
    (T GiB) x gpu_memory_utilization (U) = A GiB" (0.7-0.8) or "total_gpu_memory=T GiB ...
    gpu_memory_utilization=U" (0.6, no arena figure)."""
    if found := re.search(r"with (\d+) MB memory", line):
        return {"arena": float(found[1]) * 2**20}
    if found := re.search(r"XLA backend allocating (?:\S+ \()?(\d+) bytes", line):
        return {"arena": float(found[1])}
    if found := re.search(
        rf"total_gpu_memory \(({_NUM}) ?GiB\) x gpu_memory_utilization \(({_NUM})\) = ({_NUM}) ?GiB",
        line,
    ):
        return {
            "total": float(found[1]) * 2**30,
            "utilization": float(found[2]),
            "arena": float(found[3]) * 2**30,
        }
    if found := re.search(
        rf"total_gpu_memory=({_NUM}) ?GiB.*gpu_memory_utilization=({_NUM})", line
    ):
        return {"total": float(found[1]) * 2**30, "utilization": float(found[2])}
    return {}


def _framework(line: str) -> str:
    return next((name for name, pattern in _FRAMEWORK if pattern.search(line)), "cuda")


# ------------------------------------------------------------------------ the last report


def oom_facts(lines: list[str]) -> dict[str, Any]:
    """What the last GPU out-of-memory report in a log (lines oldest first) states: {} when
    no line reports one, else these keys, each only when the log states it:

    - line: the report's line as in the log; framework: pytorch, tensorflow, jax, vllm,
      onnxruntime, tensorrt, cuda (a CUDA API or library error however it was raised), nccl
      or limiter (TensorFusion's "Allocation denied by limiter"), from the line's wording;
    - bytes, as floats: total (the device's memory as the process sees it: under the
      limiter, the pod's vram-limit), limit (what an allocator allows: BFC "Limit:",
      PyTorch "allowed"/"PyTorch limit", the limiter's limit), requested (the allocation that
      failed; vLLM: the share of the card it would reserve), in_use (what the failing
      process had in use: PyTorch 2.x "this process has", or the only "Process N has", else
      what PyTorch's allocator had allocated; BFC "InUse:"; the limiter's "used"), free
      (free device memory stated), reserved (all PyTorch's caching allocator held: 1.x
      "reserved in total by PyTorch", 1.0-1.3 allocated + cached, 2.x allocated + "reserved
      by PyTorch but unallocated"), arena (reserved up front: TensorFlow's "Created device
      ... with N MB memory", XLA's "XLA backend allocating N bytes", vLLM's
      "total_gpu_memory x gpu_memory_utilization = A");
    - utilization: vLLM's gpu_memory_utilization (a fraction);
    - init_failure: a library's failure to start (cuDNN/cuBLAS handle, "DNN library
      initialization failed", "Failed to get convolution algorithm") after an arena line.

    A report is a line gpu_oom accepts or, after an arena line, an init failure: TensorFlow
    and JAX pre-allocation often shows only as cuDNN failing to start; then line is that
    failure and framework the arena's. A cuDNN failure with no arena before it is no report
    (its usual causes are version mismatches). The arena is the last arena line before the
    report, anywhere in the log (it is printed at start-up).

    Numbers come from the report's line first. What its wording cannot state (TensorFlow's
    "OOM when allocating tensor" states none; NCCL's "Cuda failure 'out of memory'" no size)
    comes from the nearest line of the same report that states it: the run of OOM, dump and
    Stats lines around the report line, each no more than NEAR (60) lines from the next, so a
    BFC dump of any length between the failure and its Stats stays one report; OOM lines of
    another framework there (the limiter's denial before the application's error) are
    reports of their own and lend nothing. A wording that can state a number and does not
    (PyTorch 1.x without "allowed") is left without it rather than borrow another report's.
    """
    if not isinstance(lines, list):
        raise TypeError(f"oom_facts() takes a list of lines, not {type(lines).__name__}")
    texts = [line if isinstance(line, str) else "" for line in lines]
    report, arena = _report(texts)
    if report is None:
        return {}
    line = texts[report]
    facts: dict[str, Any] = {"line": line}
    framework = _framework(line)
    if framework == "cuda" and arena is not None and not gpu_oom(line):
        framework = _framework(texts[arena])
    facts["framework"] = framework
    numbers = _numbers(line)
    for index in _near(texts, report):
        if gpu_oom(texts[index]):
            if _framework(texts[index]) != framework:
                continue  # another program's report (the limiter's beside the application's)
        elif _DUMP.search(texts[index]):
            continue  # an allocator's chunk lines state nothing read here
        for key, value in _numbers(texts[index]).items():
            if key not in numbers and value is not None:
                numbers[key] = value
    if arena is not None:
        for key, value in _arena(texts[arena]).items():
            if numbers.get(key) is None:
                numbers[key] = value
        failures = [i for i in range(arena + 1, report + 1) if _INIT_FAILURE.search(texts[i])]
        if failures:
            facts["init_failure"] = texts[failures[-1]]
    facts.update((key, value) for key, value in numbers.items() if value is not None)
    return facts


def _report(texts: list[str]) -> tuple[int | None, int | None]:
    """The index of the last report and of the last arena line before it (None for none)."""
    report = arena = last_arena = None
    for index, text in enumerate(texts):
        if _ARENA.search(text):
            last_arena = index
        elif gpu_oom(text) or (last_arena is not None and _INIT_FAILURE.search(text)):
            report, arena = index, last_arena
    return report, arena


def _linked(text: str) -> bool:
    return gpu_oom(text) or _DUMP.search(text) is not None or bool(_numbers(text))


def _near(texts: list[str], report: int) -> list[int]:
    """The other lines of the report at `report`, nearest first (before wins a tie)."""
    lines = [*_run(texts, report, -1), *_run(texts, report, 1)]
    return sorted(lines, key=lambda i: (abs(i - report), i > report))


def _run(texts: list[str], report: int, step: int) -> Iterator[int]:
    """The linked lines from `report` on in one direction, each within NEAR of the last."""
    last, index = report, report + step
    while 0 <= index < len(texts) and abs(index - last) <= NEAR:
        if _linked(texts[index]):
            yield index
            last = index
        index += step
