"""Ctrl-C stops a run within a second whatever its workers wait for: a 429's Retry-After, the
client-side QPS limit, an answer that never comes. Nothing is left at the output path."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from faultkit import FaultyEmulator
from scenariokit import SAMPLES, command
from scenarioloader import load_scenario

from collector.kube import RateLimiter, Stopped

# Without the stop reaching them, these waits hold the run for 3 x 10 s (Retry-After) or
# 20 s (the request timeout); a loaded two-core machine still stops well within this.
STOPS_WITHIN = 3.0


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory):
    with FaultyEmulator(load_scenario(SAMPLES / "healthy")) as emu:
        emu.kubeconfig = emu.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
        yield emu


@pytest.mark.parametrize(
    ("fault", "sig"),
    [
        ({"status": 429, "retry_after": 10}, signal.SIGINT),
        ({"hang": True}, signal.SIGTERM),
    ],
    ids=["retry-after", "hanging-answer"],
)
def test_interrupt_while_a_worker_waits(
    emulator: FaultyEmulator, tmp_path: Path, fault: dict[str, object], sig: int
) -> None:
    # gpunodes is listed by a worker of the first phase, while the main thread waits for it.
    hit = emulator.faults.add(resource="gpunodes", verb="list", **fault)  # type: ignore[arg-type]
    try:
        out = tmp_path / "out"
        out.mkdir()
        args = ("--kubeconfig", str(emulator.kubeconfig), "-o", str(out / "b.tar.zst"))
        proc = subprocess.Popen(
            command(*args, "--request-timeout", "20"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while hit.hits == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hit.hits, "the run never reached the list that waits"
        time.sleep(0.3)  # the answer is in; the worker is waiting now
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        emulator.faults.clear()
    assert proc.returncode == 130, err
    assert took < STOPS_WITHIN, (took, err)
    assert list(out.iterdir()) == []  # no bundle, no staging directory, no temp file
    assert err.strip().splitlines()[-1] == "tf-collect: interrupted; no bundle was written"
    assert "Traceback" not in err


def test_the_qps_limit_wait_ends_when_the_run_stops() -> None:
    stop = threading.Event()
    limiter = RateLimiter(0.05, stop=stop)  # one call every 20 s
    limiter.acquire()  # the one token of the burst
    ended: list[BaseException] = []

    def second_call() -> None:
        try:
            limiter.acquire()
        except Stopped as exc:
            ended.append(exc)

    waiter = threading.Thread(target=second_call)
    waiter.start()
    time.sleep(0.2)
    assert waiter.is_alive()  # waiting for its token
    sent = time.monotonic()
    stop.set()
    waiter.join(timeout=10)
    assert not waiter.is_alive() and ended
    assert time.monotonic() - sent < 1.0
