"""tf-collect under injected faults, randomized over seeded runs.

Every run must finish within its overall timeout, write a valid bundle, record each injected
fault with the status it deserves, and collect everything else exactly as a clean run does.
TF_FAULT_SEEDS=N runs more seeds (CI runs a handful).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from bundlekit import pseudonymise
from faultkit import FaultyEmulator
from scenariokit import SAMPLE_ENV, SAMPLES, command, tf_collect
from scenarioloader import load_scenario

from analyzer.bundle import Bundle
from emulator.server import Emulator

NS = "tensor-fusion-sys"
SEEDS = int(os.environ.get("TF_FAULT_SEEDS", "10"))
OVERALL_TIMEOUT = 60
# Lists that feed nothing else in the run (pod lists choose the later steps' targets).
LISTED = ("nodes", "gpus", "gpunodes", "gpupools", "configmaps", "deployments", "events")
# fault -> (emulator fault arguments, the artifact status it must leave)
KINDS: dict[str, tuple[dict[str, Any], str]] = {
    "403": ({"status": 403}, "forbidden"),
    "404": ({"status": 404}, "not_found"),
    "409": ({"status": 409}, "error"),
    "500": ({"status": 500}, "error"),
    "503": ({"status": 503}, "error"),
    "429-once": ({"status": 429, "retry_after": 1, "count": 1}, "ok"),  # retried, then fine
    "429": ({"status": 429, "retry_after": 1}, "error"),  # retried a few times, then given up
    "reset": ({"breaks": "reset"}, "error"),
    "read-timeout": ({"hang": True}, "timeout"),  # not a byte of an answer
    "stall": ({"breaks": "stall"}, "timeout"),  # half an answer, then silence
    "malformed": ({"breaks": "malformed"}, "error"),
}
# A log is text: "malformed" (garbled JSON) means nothing for it; a stream that never ends does.
LOG_KINDS = ("403", "404", "409", "429", "500", "503", "reset", "read-timeout", "stall", "endless")
KINDS["endless"] = ({"breaks": "endless"}, "timeout")


def _statuses(bundle: Bundle) -> dict[str, str]:
    return {a["id"]: a["status"] for a in bundle.manifest["artifacts"]}


def _collect(emu: Emulator, out: Path) -> tuple[int, float, str, dict[str, str]]:
    """Run tf-collect with the samples' key; also the original -> placeholder map."""
    kubeconfig = emu.write_kubeconfig(out.parent / "kubeconfig")
    map_file = out.parent / "map.json"
    t0 = time.monotonic()
    proc = tf_collect(
        "--kubeconfig", str(kubeconfig), "-o", str(out), "--request-timeout", "1.5",
        "--timeout", str(OVERALL_TIMEOUT), "--redaction-map", str(map_file),
        timeout=OVERALL_TIMEOUT + 60, env=SAMPLE_ENV,
    )  # fmt: skip
    mapping = json.loads(map_file.read_text())["map"] if map_file.exists() else {}
    return proc.returncode, time.monotonic() - t0, proc.stderr, mapping


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("clean") / "b.tar.zst"
    with Emulator(load_scenario(SAMPLES / "healthy")) as emu:
        code, _, stderr, _ = _collect(emu, out)
    assert code == 0, stderr
    return _statuses(Bundle.open(out))


def _affected(art: dict[str, Any], target: tuple[str, str, str | None]) -> bool:
    verb, resource, name = target
    if verb == "log":
        return art["type"] == "log" and art.get("pod") == name
    return art["type"] == "objects" and art.get("resource") == resource


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_faults(seed: int, clean: dict[str, str], tmp_path: Path) -> None:
    rng = random.Random(seed)
    data = load_scenario(SAMPLES / "healthy")
    log_pods = sorted(key.pod for key in data.logs if key.namespace == NS and not key.previous)
    targets: list[tuple[tuple[str, str, str | None], str]] = []
    list_kinds = sorted(KINDS.keys() - {"endless"})
    # The first two faults of run N cycle through every kind, so the default seeds cover them
    # all (and the log fault through every log kind).
    for i, resource in enumerate(rng.sample(LISTED, 3)):
        kind = list_kinds[(2 * seed + i) % len(list_kinds)] if i < 2 else rng.choice(list_kinds)
        targets.append((("list", resource, None), kind))
    targets.append((("log", "pods", rng.choice(log_pods)), LOG_KINDS[seed % len(LOG_KINDS)]))
    with FaultyEmulator(data) as emu:
        for (verb, resource, name), kind in targets:
            emu.faults.add(resource=resource, verb=verb, name=name, **KINDS[kind][0])
        out = tmp_path / "b.tar.zst"
        code, took, stderr, mapping = _collect(emu, out)
    assert "Traceback" not in stderr
    assert took < OVERALL_TIMEOUT + 10, f"took {took:.1f}s"
    assert code in (0, 3), stderr
    bundle = Bundle.open(out)  # valid: the reader checks the manifest against its schema
    arts = bundle.manifest["artifacts"]
    hit: set[str] = set()
    for target, kind in targets:
        verb, resource, name = target
        seen = (verb, resource, pseudonymise(name, mapping) if name else None)
        affected = [a for a in arts if _affected(a, seen)]
        assert affected, f"seed {seed}: no artifact for {target}"
        for art in affected:
            want = KINDS[kind][1]
            if want == "ok":
                assert art["status"] == clean[art["id"]], (seed, kind, art)
            else:
                assert art["status"] == want, (seed, kind, art)
                assert art["message"], art
            hit.add(art["id"])
    # Everything not faulted is collected as in a clean run.
    for art in arts:
        if art["id"] not in hit and art["id"] in clean:
            assert art["status"] == clean[art["id"]], (seed, art)
    assert {a["id"] for a in arts} >= set(clean) - {
        a for a in clean if a.startswith("log:") and any(t[0][0] == "log" for t in targets)
    }
    assert (code == 3) == any(a["status"] in ("forbidden", "timeout", "error") for a in arts), (
        stderr
    )


def test_api_server_going_away_mid_run(tmp_path: Path) -> None:
    data = load_scenario(SAMPLES / "healthy")
    emu = FaultyEmulator(data).start()
    # Slow answers, so the run is surely under way when the server goes.
    emu.faults.latency = 0.2
    kubeconfig = emu.write_kubeconfig(tmp_path / "kubeconfig")
    out = tmp_path / "b.tar.zst"
    proc = subprocess.Popen(
        command("--kubeconfig", str(kubeconfig), "-o", str(out),
                "--request-timeout", "2", "--concurrency", "2"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while emu.requests < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    emu.stop()
    _, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr
    # It got /version, so this is a partial collection: a bundle with every later call
    # recorded as failed, never a crash.
    assert proc.returncode == 3, stderr
    arts = Bundle.open(out).manifest["artifacts"]
    failed = [a for a in arts if a["status"] not in ("ok", "truncated", "not_found")]
    assert failed
    for art in failed:
        assert art["status"] in ("error", "timeout"), art
        assert art["message"].startswith(("connection failed", "no answer within")), art
