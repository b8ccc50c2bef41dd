"""GPU out-of-memory reports: real messages (oom_messages.yaml) give exactly the facts a rule
relies on, near misses give none, the last report of a log wins, and rules/_functions.yaml's
cuda_oom agrees with gpu_oom through the rules' own function machinery."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from oomkit import CORPUS, FRAMEWORKS, NEAR_MISSES, REPORTS, expected

from analyzer.rules import cel
from analyzer.rules.functions import FUNCTIONS
from analyzer.rules.loading import default_rules_dir, load_functions
from analyzer.rules.oom import NEAR, gpu_oom, oom_facts


def _id(entry: dict[str, Any]) -> str:
    return re.sub(r"^https?://(github\.com/)?", "", entry["source"])[:70]


def test_the_corpus_is_well_formed() -> None:
    problems = []
    for entry in CORPUS:
        keys = set(entry) - {"source", "text", "note", "verbatim"}
        if entry.get("near_miss"):
            if keys != {"near_miss", "why"}:
                problems.append(f"{_id(entry)}: near miss with {sorted(keys)}")
        elif keys != {"facts"} or entry["facts"].get("framework") not in FRAMEWORKS:
            problems.append(f"{_id(entry)}: report with {sorted(keys)}")
        if not re.match(r"https?://", entry["source"]):
            problems.append(f"{_id(entry)}: no source")
        if entry.get("verbatim") is False and not entry.get("note"):
            problems.append(f"{_id(entry)}: not verbatim and no note says why")
    assert problems == []
    assert len(REPORTS) >= 30
    counts = {fw: sum(e["facts"]["framework"] == fw for e in REPORTS) for fw in FRAMEWORKS}
    assert {fw: n for fw, n in counts.items() if n < 3} == {}


@pytest.mark.parametrize("entry", REPORTS, ids=_id)
def test_a_real_report_gives_exactly_its_facts(entry: dict[str, Any]) -> None:
    got = oom_facts(entry["text"].splitlines())
    want = expected(entry)
    assert got == {
        k: pytest.approx(v, rel=1e-9) if isinstance(v, float) else v for k, v in want.items()
    }


@pytest.mark.parametrize("entry", REPORTS, ids=_id)
def test_gpu_oom_accepts_the_report_line(entry: dict[str, Any]) -> None:
    facts = expected(entry)
    # After an arena the report may be a library failing to start, which alone is no OOM.
    assert gpu_oom(facts["line"]) is ("init_failure" not in facts)


@pytest.mark.parametrize("entry", NEAR_MISSES, ids=_id)
def test_a_near_miss_gives_nothing(entry: dict[str, Any]) -> None:
    lines = entry["text"].splitlines()
    assert oom_facts(lines) == {}
    assert [line for line in lines if gpu_oom(line)] == []


# ------------------------------------------------------------------------ logs of many lines


def _lines(source: str) -> list[str]:
    """The text of the corpus entry from `source` (the first one), as lines."""
    return next(e for e in CORPUS if e["source"] == source)["text"].splitlines()


PYTORCH_2 = _lines("https://github.com/pytorch/pytorch/issues/16417")
PYTORCH_1 = _lines("https://github.com/2KangHo/vdsr_pytorch/issues/2")
NCCL = _lines("https://github.com/NVIDIA/nccl/issues/1235")
TF_ARENA = _lines(
    "https://github.com/WorkPlaceForMe/G-SATE/blob/f9540a0def0008046292e2dd23bc7f2005f5a679/handle/shares/59f56-4956-2/log.e"
)
TF_CUDNN = _lines("https://github.com/tensorflow/tensorflow/issues/8879")[1:]
VLLM_PROFILE = _lines("https://github.com/vllm-project/vllm/issues/11251")
LIMITER = _lines(
    "https://github.com/NexusGPU/vgpu.rs/blob/139c59ea4b6bf6118d57d3dd1d46b34fdd2a961c/crates/cuda-limiter/src/detour/mem.rs"
)
TF_OOM = _lines("https://e-com-net.com/article/1612681166198964224.htm")
FILLER = [f"Epoch 3: step {i}, loss 0.12" for i in range(200)]


def test_the_last_report_wins() -> None:
    facts = oom_facts(PYTORCH_1 + FILLER + PYTORCH_2 + FILLER)
    assert facts["line"] == PYTORCH_2[0]
    assert facts["total"] == pytest.approx(23.65 * 2**30)
    assert oom_facts(PYTORCH_2 + PYTORCH_1)["total"] == pytest.approx(15.90 * 2**30)


def test_a_report_borrows_no_number_from_another_programs_report() -> None:
    # TensorFlow's "OOM when allocating tensor" states no number; the limiter's and PyTorch's
    # lines just before it are other reports.
    assert oom_facts(LIMITER + PYTORCH_2 + TF_OOM) == {
        "line": TF_OOM[-1],
        "framework": "tensorflow",
    }


def test_an_arena_followed_by_a_library_failing_to_start_is_pre_allocation() -> None:
    facts = oom_facts(TF_ARENA + FILLER + TF_CUDNN)
    assert facts == {
        "line": TF_CUDNN[0],
        "framework": "tensorflow",
        "arena": 9344 * 2**20,
        "init_failure": TF_CUDNN[0],
    }


def test_an_arena_with_no_failure_after_it_is_no_report() -> None:
    assert oom_facts(TF_ARENA + FILLER) == {}
    assert oom_facts(TF_CUDNN + TF_ARENA) == {}  # the failure came before the reservation
    assert oom_facts(VLLM_PROFILE + FILLER) == {}


def test_an_arena_before_an_oom_is_part_of_its_report() -> None:
    facts = oom_facts(VLLM_PROFILE + FILLER + PYTORCH_2)
    assert facts["framework"] == "pytorch"
    assert facts["total"] == pytest.approx(23.65 * 2**30)  # the report's own figure wins
    assert facts["arena"] == pytest.approx(14.20 * 2**30)
    assert facts["utilization"] == 0.90
    assert "init_failure" not in facts


def test_numbers_the_report_line_lacks_come_from_its_own_lines_only() -> None:
    assert oom_facts(NCCL)["requested"] == 6291456
    far = NCCL[:1] + FILLER[: NEAR + 1] + NCCL[2:]
    assert "requested" not in oom_facts(far)


def test_the_limiter_line_is_a_report_of_its_own() -> None:
    facts = oom_facts(PYTORCH_2 + LIMITER)
    assert (facts["framework"], facts["limit"], facts["in_use"]) == (
        "limiter",
        17179869184,
        15837691904,
    )
    # The application's OOM after the denial is the last report; its total is what the
    # limiter answered cuMemGetInfo with.
    assert oom_facts(LIMITER + PYTORCH_2)["framework"] == "pytorch"


def test_a_long_log_stays_cheap() -> None:
    # Called on every pod's log: a few thousand lines, or a BFC dump of thousands of chunks.
    dump = [f"{TF_OOM[0][:30]} I tensorflow/core/common_runtime/bfc_allocator.cc:1095] InUse at {i:x} of size 256"
            for i in range(5000)]  # fmt: skip
    logs = [FILLER * 25 + PYTORCH_2, dump + TF_OOM]
    start = time.perf_counter()
    facts = [oom_facts(log) for log in logs]
    assert [f["framework"] for f in facts] == ["pytorch", "tensorflow"]
    assert time.perf_counter() - start < 1.0


def test_bad_input_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        oom_facts("torch.OutOfMemoryError: CUDA out of memory.")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gpu_oom(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ through CEL


@pytest.fixture(scope="module")
def defined() -> dict[str, cel.Function]:
    return load_functions(default_rules_dir())


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_cuda_oom_in_cel_agrees_with_gpu_oom(
    entry: dict[str, Any], defined: dict[str, cel.Function]
) -> None:
    program = cel.compile("lines.map(l, cuda_oom(l))", FUNCTIONS, defined)
    lines = entry["text"].splitlines()
    assert program.run({"lines": lines}) == [gpu_oom(line) for line in lines]


def test_rules_read_the_facts_as_a_map(defined: dict[str, cel.Function]) -> None:
    source = (
        'cel.bind(f, oom_facts(log), has(f.total) && f.framework == "pytorch" && !has(f.arena) && '
        'dig(f, "total", 0.0) >= 0.995 * quantity(limit) && f.total <= 1.005 * quantity(limit))'
    )
    program = cel.compile(source, FUNCTIONS, defined)
    limit = "23.65Gi"
    assert program.run({"log": PYTORCH_2, "limit": limit}) is True
    assert program.run({"log": FILLER, "limit": limit}) is False
