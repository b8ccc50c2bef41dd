"""run_exec against the emulator, and the manual's exec checks as data (and as real sh)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulatorkit import TF_EXEC
from faultkit import FaultyEmulator
from kubernetes import client, config
from scenarioloader import load_scenario

from collector.execs import CONTAINER_CHECKS, NODE_CHECKS, ExecCheck, ExecResult, run_exec
from emulator.cluster import ExecKey, ExecReply
from emulator.server import Emulator
from tf_support_schemas.manual import load_manual

NS, POD, APP = "ml", "chat-7c9d8f6b5-q2w4e", "app"
HYPERVISOR = ("tensor-fusion-sys", "hypervisor-gpu-node-1", "hypervisor")
MANUAL = Path(__file__).resolve().parents[2] / "docs" / "manual"
PRELOAD = "/tensor-fusion-limiter/libcuda_limiter.so\n"
BIG = ["seq", "200000"]


def _check(check_id: str) -> ExecCheck:
    return next(c for c in (*CONTAINER_CHECKS, *NODE_CHECKS) if c.id == check_id)


@pytest.fixture(scope="module")
def emulator() -> Iterator[FaultyEmulator]:
    data = load_scenario(TF_EXEC)
    # Every check answers in the workload and the hypervisor, each with its own output.
    for check in CONTAINER_CHECKS:
        data.execs[ExecKey(NS, POD, APP, check.argv)] = ExecReply(stdout=f"{check.id}\n")
    for check in NODE_CHECKS:
        data.execs[ExecKey(*HYPERVISOR, check.argv)] = ExecReply(stdout=f"{check.id}\n")
    data.execs[ExecKey(NS, POD, APP, ("cat", "/etc/ld.so.preload"))] = ExecReply(stdout=PRELOAD)
    data.execs[ExecKey(NS, POD, APP, _check("limits-not-enforced/shm-file").argv)] = ExecReply(
        stderr="TF_SHM_PATH is not set\n", exit_code=2
    )
    data.execs[ExecKey(NS, POD, APP, tuple(BIG))] = ExecReply(
        stdout="".join(f"{i}\n" for i in range(200000)), stderr="never read\n"
    )
    with FaultyEmulator(data) as emu:
        yield emu


@pytest.fixture(autouse=True)
def _clean_faults(emulator: FaultyEmulator) -> Iterator[None]:
    yield
    emulator.faults.clear()


@pytest.fixture(scope="module")
def api_client(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> client.ApiClient:
    kubeconfig = emulator.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    cfg.retries = False
    return client.ApiClient(cfg)


def _exec_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name.startswith(("tf-exec-", "k8s-emulator-exec"))
    ]


def _settled(seconds: float = 3.0) -> bool:
    """Whether every exec helper and emulator exec thread has ended within `seconds`."""
    end = time.monotonic() + seconds
    while _exec_threads() and time.monotonic() < end:
        time.sleep(0.02)
    return not _exec_threads()


# --- run_exec --------------------------------------------------------------------------------


def test_ok(api_client: client.ApiClient) -> None:
    result = run_exec(api_client, NS, POD, APP, ["cat", "/etc/ld.so.preload"], timeout=5)
    assert result == ExecResult(PRELOAD, "", 0, "ok", "", False)


def test_non_zero_exit_is_ok_with_its_code(api_client: client.ApiClient) -> None:
    argv = list(_check("limits-not-enforced/shm-file").argv)
    result = run_exec(api_client, NS, POD, APP, argv, timeout=5)
    assert (result.status, result.exit_code, result.stderr) == ("ok", 2, "TF_SHM_PATH is not set\n")
    assert result.message.startswith("command terminated with non-zero exit code: ")


def test_truncated_stops_reading_at_max_bytes(api_client: client.ApiClient) -> None:
    result = run_exec(api_client, NS, POD, APP, BIG, timeout=5, max_bytes=100_000)
    assert (result.status, result.truncated, result.exit_code) == ("truncated", True, None)
    assert len(result.stdout) == 100_000 and result.stdout.startswith("0\n1\n2\n")
    assert result.stderr == ""
    assert result.message == "output exceeded 100000 bytes; the rest was not read"
    assert _settled()


def test_forbidden(api_client: client.ApiClient, emulator: FaultyEmulator) -> None:
    emulator.faults.add(resource="pods", verb="exec", namespace=NS, status=403)
    result = run_exec(api_client, NS, POD, APP, ["cat", "/etc/ld.so.preload"], timeout=5)
    assert (result.status, result.exit_code) == ("forbidden", None)
    assert result.message == (
        f'403: pods "{POD}" is forbidden: User "system:serviceaccount:default:tf-support" '
        'cannot get resource "pods/exec" in API group "" in the namespace "ml"'
    )


def test_not_found(api_client: client.ApiClient) -> None:
    gone = run_exec(api_client, NS, "no-such-pod", APP, ["cat", "/x"], timeout=5)
    assert (gone.status, gone.message) == ("not_found", '404: pods "no-such-pod" not found')
    nope = run_exec(api_client, NS, POD, "nope", ["cat", "/x"], timeout=5)
    assert (nope.status, nope.message) == (
        "not_found",
        f"400: container nope is not valid for pod {POD}",
    )


def test_commands_that_never_ran_are_errors(api_client: client.ApiClient) -> None:
    missing = run_exec(api_client, NS, POD, APP, ["lsmod"], timeout=5)
    assert (missing.status, missing.exit_code) == ("error", None)
    assert 'exec: "lsmod": executable file not found in $PATH: unknown' in missing.message
    crashing = run_exec(api_client, NS, "llm-inference-7d9f8b6c4-abcde", "llm", ["cat"], timeout=5)
    assert (crashing.status, crashing.message) == (
        "error",
        'Internal error occurred: unable to upgrade connection: container not found ("llm")',
    )
    shell = run_exec(api_client, NS, POD, APP, ["sh", "-c", "lsmod | grep nvidia"], timeout=5)
    assert (shell.status, shell.exit_code, shell.stderr) == ("ok", 127, "sh: lsmod: not found\n")


def test_timeout_when_the_command_hangs(
    api_client: client.ApiClient, emulator: FaultyEmulator
) -> None:
    emulator.faults.add(resource="pods", verb="exec", hang=True)
    started = time.monotonic()
    result = run_exec(api_client, NS, POD, APP, ["cat", "/etc/ld.so.preload"], timeout=0.5)
    took = time.monotonic() - started
    assert (result.status, result.exit_code) == ("timeout", None)
    assert result.message == "the command did not finish within 0.5s"
    assert 0.5 <= took < 1.5
    assert _settled()  # our socket closed, the emulator's session saw it and ended


def test_timeout_when_the_handshake_is_slow(
    api_client: client.ApiClient, emulator: FaultyEmulator
) -> None:
    emulator.faults.add(resource="pods", verb="exec", latency=0.8, count=1)
    started = time.monotonic()
    result = run_exec(api_client, NS, POD, APP, ["cat", "/etc/ld.so.preload"], timeout=0.2)
    assert time.monotonic() - started < 0.6  # the caller is not held by the handshake
    assert (result.status, result.message) == (
        "timeout",
        "the exec connection was not set up within 0.2s",
    )
    assert _settled()  # the helper got its late connection and closed it


def test_connection_failure_is_an_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        cfg = client.Configuration(host=f"http://127.0.0.1:{port}")
        result = run_exec(client.ApiClient(cfg), NS, POD, APP, ["cat"], timeout=5)
    assert result.status == "error"
    assert result.message.startswith("exec connection failed: ")
    assert "\n" not in result.message


def test_concurrent_calls_share_one_api_client(
    api_client: client.ApiClient, emulator: Emulator
) -> None:
    # The collector's shape: execs and plain API calls on one ApiClient from a thread pool.
    core = client.CoreV1Api(api_client)
    results: dict[int, ExecResult] = {}
    answers: dict[int, ExecReply] = {}
    listed: list[int] = []

    def execs(n: int) -> None:
        for round_ in range(3):
            check = CONTAINER_CHECKS[(n + round_) % len(CONTAINER_CHECKS)]
            result = run_exec(api_client, NS, POD, APP, list(check.argv), timeout=5)
            results[n * 10 + round_] = result
            answers[n * 10 + round_] = emulator.data.execs[ExecKey(NS, POD, APP, check.argv)]

    def lists() -> None:
        for _ in range(20):
            listed.append(len(core.list_namespaced_pod(NS).items))

    threads = [threading.Thread(target=execs, args=(n,)) for n in range(8)]
    threads.append(threading.Thread(target=lists))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(results) == 24 and {r.status for r in results.values()} == {"ok"}
    for n, result in results.items():  # each thread got its own command's answer
        assert (result.stdout, result.stderr) == (answers[n].stdout, answers[n].stderr)
    assert listed == [3] * 20  # no plain call was routed down the WebSocket path
    assert "call_api" not in vars(api_client)  # the shared client was never patched


def test_rejects_an_empty_argv(api_client: client.ApiClient) -> None:
    with pytest.raises(ValueError, match="non-empty list"):
        run_exec(api_client, NS, POD, APP, [], timeout=5)


# --- the checks as data ----------------------------------------------------------------------

ALL = (*CONTAINER_CHECKS, *NODE_CHECKS)
# Rows that name a command in prose rather than in a code block.
PROSE = {("limits-not-enforced", "/proc/<pid>/maps"), ("gpu-discovery", "nvidia-smi")}


def _manual_sections() -> dict[str, str]:
    keys = {s.zh: s.key for s in load_manual().sections.values()}
    text = (MANUAL / "troubleshooting.zh.md").read_text()
    parts = re.split(r"^## (.*)$", text, flags=re.M)
    return {
        keys[title.strip()]: body
        for title, body in zip(parts[1::2], parts[2::2], strict=True)
        if title.strip() in keys
    }


def _code_lines(body: str) -> set[str]:
    lines = {
        # the last line of a `sh -c '...'` block carries the closing quote: not the command's
        line.strip()[:-1] if line.strip().count("'") % 2 else line.strip()
        for block in re.findall(r"```sh\n(.*?)```", body, re.S)
        for line in block.splitlines()
    }
    inline = {c.replace("\\|", "|") for c in re.findall(r"`([^`\n]+)`", body)}
    return lines | inline


def test_check_ids_and_sections() -> None:
    ids = [c.id for c in ALL]
    names = [i.rsplit("/", 1)[1] for i in ids]  # the bundle member name of each check
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names)
    for check in ALL:
        assert check.section == check.manual[0][0], check.id
        assert check.section in {"limits-not-enforced", "cuda-oom", "cuda-libs"}, check.id
    assert {c.section for c in CONTAINER_CHECKS} == {"limits-not-enforced", "cuda-libs"}
    assert _check("limits-not-enforced/ld-preload").argv == ("cat", "/etc/ld.so.preload")


def test_every_manual_text_is_the_manuals_own() -> None:
    sections = _manual_sections()
    for check in ALL:
        for section, command in check.manual:
            if (section, command) in PROSE:
                assert command in sections[section], (check.id, command)
            else:
                assert command in _code_lines(sections[section]), (check.id, section, command)


def test_the_manuals_exec_commands_are_all_covered() -> None:
    covered = {pair for check in ALL for pair in check.manual}
    sections = _manual_sections()
    wanted = {
        ("limits-not-enforced", "cat /etc/ld.so.preload"),
        ("limits-not-enforced", 'env | grep -E "^TF_(ISOLATION_MODE|SHM_PATH)="'),
        ("limits-not-enforced", 'ls -l "$TF_SHM_PATH"'),
        ("limits-not-enforced", "nvidia-smi"),
        ("cuda-oom", "kubectl exec <pod> -n <namespace> -c <container> -- nvidia-smi"),
        ("cuda-libs", "lsmod | grep nvidia"),
    } | {
        ("cuda-libs", line)
        for line in re.findall(r"```sh\n(.*?)```", sections["cuda-libs"], re.S)[0].splitlines()
    }
    assert wanted - covered == set()
    node = {pair for check in NODE_CHECKS for pair in check.manual}
    assert {("cuda-libs", "nvidia-smi"), ("cuda-libs", "lsmod | grep nvidia")} <= node


# --- the scripts, in a real sh ---------------------------------------------------------------

SCRIPTS = [c for c in ALL if c.argv[:2] == ("sh", "-c")]


@pytest.mark.parametrize("check", SCRIPTS, ids=[c.id for c in SCRIPTS])
def test_scripts_parse_and_write_nothing(check: ExecCheck) -> None:
    script = check.argv[2]
    assert subprocess.run(["sh", "-n", "-c", script], capture_output=True).returncode == 0
    # read-only: output goes to the caller or to /dev/null, never into a file
    redirects = re.findall(r"\d*>+\s*&?[^\s;)]*", script)
    assert set(redirects) <= {">/dev/null", "2>/dev/null", ">&2", "2>&1"}, redirects
    assert not re.search(r"\b(rm|mv|cp|tee|chmod|chown|mkdir|touch|kill|dd)\b", script)


def _sh(check_id: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = _check(check_id).argv
    return subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=20)


def test_tf_env_prints_tf_variables_and_ld_preload_only() -> None:
    env = {"PATH": os.environ["PATH"], "TF_ISOLATION_MODE": "soft", "LD_PRELOAD": "/x.so"}
    proc = _sh("limits-not-enforced/tf-env", {**env, "TFX": "no", "NOT_TF_A": "no"})
    assert (proc.returncode, sorted(proc.stdout.splitlines())) == (
        0,
        ["LD_PRELOAD=/x.so", "TF_ISOLATION_MODE=soft"],
    )


def test_shm_file_names_an_unset_variable(tmp_path: Path) -> None:
    unset = _sh("limits-not-enforced/shm-file", {"PATH": os.environ["PATH"]})
    assert (unset.returncode, unset.stderr) == (2, "TF_SHM_PATH is not set\n")
    shm = tmp_path / "ml_pod"
    shm.write_bytes(b"\0" * 16)
    found = _sh(
        "limits-not-enforced/shm-file", {"PATH": os.environ["PATH"], "TF_SHM_PATH": str(shm)}
    )
    assert found.returncode == 0 and str(shm) in found.stdout


def test_limiter_mapped_names_processes_never_maps(tmp_path: Path) -> None:
    if len(list(Path("/proc").glob("[0-9]*"))) > 900:
        pytest.skip("too many processes here for the script's bound")
    lib = tmp_path / "libcuda_limiter.so"
    lib.write_bytes(b"\x7fELF" + b"\0" * 4092)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import mmap, sys, time; f = open(sys.argv[1], 'rb'); "
            "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); print('ok', flush=True); "
            "time.sleep(30)",
            str(lib),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ok\n"
        proc = _sh("limits-not-enforced/limiter-mapped", {"PATH": os.environ["PATH"]})
    finally:
        holder.kill()
        holder.wait()
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0
    assert any(line.startswith(f"{holder.pid} ") and line.endswith(": mapped") for line in lines)
    assert all(re.fullmatch(r"\d+ .*: (mapped|not mapped)", line) for line in lines)
    assert str(lib) not in proc.stdout and "r--s" not in proc.stdout  # never the maps themselves
