"""Redacting many members over several processes, with the result of one serial run.

Why it is safe: every pseudonym is a keyed function of its original (the address permutation
and the secret tag are both computed from the per-bundle key), so worker processes given the
same key assign the same placeholders without talking to each other. The parent merges what
they saw (counts, the original -> placeholder map). The one thing a worker cannot know is a
tag collision with a value another worker saw (two values whose tags share their first hex
digits); the merge detects it and the whole job is redone serially, so the output is always
what a single process would have written.

Why it exists: the regex engine is single-threaded and the GIL keeps threads from helping,
so only processes put more than one core to work (bench/redact_throughput.py measures it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .engine import Redactor

# (redactor, member name, data) -> redacted data; must be a module-level function (pickled).
MemberFn = Callable[[Redactor, str, Any], Any]
MIN_PARALLEL_BYTES = 4 * 1024 * 1024  # below this, starting processes costs more than it saves

_worker: Redactor | None = None


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def redact_members(
    redactor: Redactor,
    items: Sequence[tuple[str, Any]],
    fn: MemberFn,
    *,
    workers: int = 1,
) -> list[Any]:
    """fn(redactor, name, data) for every item, in order, over `workers` processes."""
    total = sum(len(data) for _, data in items)
    if workers <= 1 or len(items) < 2 or total < MIN_PARALLEL_BYTES:
        return [fn(redactor, name, data) for name, data in items]
    chunks = _balanced(items, workers * 4)
    with ProcessPoolExecutor(
        workers, initializer=_init, initargs=(redactor.pseudonyms.key, redactor.public_ips)
    ) as pool:
        results = list(pool.map(_run_chunk, [(fn, [items[i] for i in c]) for c in chunks]))
    states = [state for _, state in results]
    if not redactor.merge(states):
        # A tag collision between workers: redo it all here, as one run would have.
        return [fn(redactor, name, data) for name, data in items]
    out: list[Any] = [None] * len(items)
    for chunk, (outputs, _) in zip(chunks, results, strict=True):
        for index, value in zip(chunk, outputs, strict=True):
            out[index] = value
    return out


def _balanced(items: Sequence[tuple[str, Any]], n: int) -> list[list[int]]:
    """Item indexes in n chunks of about equal bytes (largest first, into the lightest)."""
    chunks: list[list[int]] = [[] for _ in range(min(n, len(items)))]
    weights = [0] * len(chunks)
    for i in sorted(range(len(items)), key=lambda i: -len(items[i][1])):
        lightest = weights.index(min(weights))
        chunks[lightest].append(i)
        weights[lightest] += len(items[i][1])
    return [sorted(c) for c in chunks if c]


def _init(key: bytes, public_ips: bool) -> None:
    global _worker  # one engine per worker process, like one per run
    _worker = Redactor(key=key, public_ips=public_ips)


def _run_chunk(job: tuple[MemberFn, list[tuple[str, Any]]]) -> tuple[list[Any], dict[str, Any]]:
    fn, items = job
    assert _worker is not None
    outputs = [fn(_worker, name, data) for name, data in items]
    state = _worker.export()
    _worker.reset()
    return outputs, state


def redact_text_member(redactor: Redactor, name: str, text: str) -> str:
    return redactor.redact_text(text, member=name)
