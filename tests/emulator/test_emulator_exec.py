"""Pod exec over WebSocket: the real kubectl, the real client, raw frames, and the scenario
exec/ format."""

from __future__ import annotations

import base64
import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websocket
from emulatorkit import TF_BASIC, TF_EXEC, Kubectl
from faultkit import FaultyEmulator
from kubernetes import client, config
from kubernetes.stream import stream
from scenarioloader import ScenarioError, load_scenario

from emulator.cluster import ExecKey, ExecReply
from emulator.execs import websocket_accept
from emulator.server import Emulator

POD = "chat-7c9d8f6b5-q2w4e"
PRELOAD = "/tensor-fusion-limiter/libcuda_limiter.so\n"
EXEC_PATH = f"/api/v1/namespaces/ml/pods/{POD}/exec"


@pytest.fixture(scope="module")
def emulator() -> Iterator[FaultyEmulator]:
    # Overrides conftest's tf-basic emulator: kubeconfig, kubectl and fault cleaning follow it.
    data = load_scenario(TF_EXEC)
    data.execs[ExecKey("ml", POD, "app", ("seq", "100000"))] = ExecReply(
        stdout="".join(f"{i}\n" for i in range(1, 100001))
    )
    with FaultyEmulator(data) as emu:
        yield emu


@pytest.fixture(scope="module")
def core(kubeconfig: Path) -> client.CoreV1Api:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    return client.CoreV1Api(client.ApiClient(cfg))


def _ws(emu: Emulator, query: str, protocols: list[str] | None = None) -> websocket.WebSocket:
    url = f"ws://{emu.host}:{emu.port}{EXEC_PATH}?{query}"
    return websocket.create_connection(url, timeout=5, subprotocols=protocols)


def _frames(ws: websocket.WebSocket) -> list[tuple[int, bytes]]:
    """(opcode, payload) of every data frame until the server's close."""
    out = []
    while True:
        opcode, frame = ws.recv_data_frame(True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return out
        out.append((opcode, frame.data))


def _raw(emu: Emulator, method: str, path: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


# --- the real kubectl ------------------------------------------------------------------------


def test_kubectl_exec_prints_stdout_and_exits_zero(kubectl: Kubectl) -> None:
    proc = kubectl("exec", POD, "-n", "ml", "-c", "app", "--", "cat", "/etc/ld.so.preload")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, PRELOAD, "")


def test_kubectl_exec_exits_with_the_recorded_code(kubectl: Kubectl) -> None:
    proc = kubectl("exec", POD, "-n", "ml", "-c", "app", "--", "cat", "/etc/missing.conf")
    assert proc.returncode == 1
    assert proc.stderr == (
        "cat: /etc/missing.conf: No such file or directory\ncommand terminated with exit code 1\n"
    )


def test_kubectl_exec_of_unrecorded_commands(kubectl: Kubectl) -> None:
    shell = kubectl("exec", POD, "-n", "ml", "-c", "app", "--", "sh", "-c", "nvidia-smi | head")
    assert shell.returncode == 127
    assert shell.stderr == "sh: nvidia-smi: not found\ncommand terminated with exit code 127\n"
    direct = kubectl("exec", POD, "-n", "ml", "-c", "app", "--", "ldconfig", "-p")
    assert direct.returncode == 1
    assert direct.stderr.startswith("error: Internal error occurred: error executing command in")
    assert 'exec: "ldconfig": executable file not found in $PATH: unknown' in direct.stderr


def test_kubectl_exec_refusals(kubectl: Kubectl, emulator: FaultyEmulator) -> None:
    crashing = kubectl("exec", "llm-inference-7d9f8b6c4-abcde", "-n", "ml", "--", "cat", "/x")
    assert crashing.returncode == 1
    assert crashing.stderr == (
        'error: Internal error occurred: unable to upgrade connection: container not found ("llm")\n'
    )
    bad = kubectl("exec", POD, "-n", "ml", "-c", "nope", "--", "cat", "/x")
    # kubectl 1.36 and later checks the name itself and lists the pod's containers (kubectl
    # commit 67b78e8, "List containers when given container is not found"); older ones leave
    # the check to the API server. Either way the command fails naming the missing container.
    assert bad.returncode == 1
    assert bad.stderr in (
        f"Error from server (BadRequest): container nope is not valid for pod {POD}\n",
        f"error: container nope is not valid for pod {POD} out of: app, sidecar, "
        "init-soft-limiter (init), tf-soft-preload-0 (init)\n",
    )
    emulator.faults.add(resource="pods", verb="exec", namespace="ml", status=403)
    denied = kubectl("exec", POD, "-n", "ml", "-c", "app", "--", "cat", "/etc/ld.so.preload")
    # kubectl retries a failed WebSocket upgrade over SPDY (a POST): RBAC's verb is create then.
    # kubectl 1.36 and later (its SPDY transport moved to k8s.io/streaming) prints the refused
    # upgrade as "unable to upgrade connection:" and the Status message, not as a server error.
    assert denied.returncode == 1
    forbidden = (
        f'pods "{POD}" is forbidden: User "system:serviceaccount:default:tf-support" cannot '
        'create resource "pods/exec" in API group "" in the namespace "ml"\n'
    )
    assert denied.stderr in (
        f"Error from server (Forbidden): {forbidden}",
        f"error: unable to upgrade connection: {forbidden}",
    )
    can_i = kubectl("auth", "can-i", "create", "pods", "--subresource=exec", "-n", "ml")
    assert (can_i.returncode, can_i.stdout) == (1, "no\n")


# --- the real kubernetes client --------------------------------------------------------------


def test_client_stream_preloaded(core: client.CoreV1Api) -> None:
    out = stream(
        core.connect_get_namespaced_pod_exec,
        POD,
        "ml",
        command=["cat", "/etc/ld.so.preload"],
        container="app",
        stdout=True,
        stderr=True,
        stdin=False,
        tty=False,
    )
    assert out == PRELOAD


def test_client_stream_reads_the_exit_code_from_the_error_channel(core: client.CoreV1Api) -> None:
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        POD,
        "ml",
        command=["cat", "/etc/missing.conf"],
        container="app",
        stdout=True,
        stderr=True,
        stdin=False,
        tty=False,
        _preload_content=False,
    )
    try:
        resp.run_forever(timeout=5)
        assert resp.subprotocol == "v5.channel.k8s.io"
        assert resp.read_stderr() == "cat: /etc/missing.conf: No such file or directory\n"
        assert resp.returncode == 1
    finally:
        resp.close()


# --- the wire --------------------------------------------------------------------------------


def test_websocket_accept_matches_rfc_6455() -> None:
    assert websocket_accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_channels_and_status_on_v4(emulator: Emulator) -> None:
    ws = _ws(
        emulator,
        "command=cat&command=/etc/missing.conf&container=app&stdout=true&stderr=true",
        ["v4.channel.k8s.io"],
    )
    assert ws.getsubprotocol() == "v4.channel.k8s.io"
    frames = _frames(ws)
    ws.close()
    assert all(op == websocket.ABNF.OPCODE_BINARY for op, _ in frames)
    assert [f[0] for _, f in frames] == [2, 3]  # stderr, then the status, then close
    assert frames[0][1][1:] == b"cat: /etc/missing.conf: No such file or directory\n"
    assert json.loads(frames[1][1][1:]) == {
        "metadata": {},
        "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command "
        "[cat /etc/missing.conf], exit code 1",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "1"}]},
    }


def test_large_output_comes_in_32k_messages(emulator: Emulator) -> None:
    ws = _ws(
        emulator, "command=seq&command=100000&container=app&stdout=true", ["v5.channel.k8s.io"]
    )
    frames = _frames(ws)
    ws.close()
    stdout = b"".join(f[1:] for _, f in frames if f[0] == 1)
    assert stdout.decode().splitlines()[-1] == "100000"
    assert max(len(f) for _, f in frames) == 32 * 1024 + 1
    assert json.loads(frames[-1][1][1:]) == {"metadata": {}, "status": "Success"}


def test_base64_and_v1_protocols(emulator: Emulator) -> None:
    ws = _ws(
        emulator,
        "command=cat&command=/etc/ld.so.preload&container=app&stdout=true",
        ["v4.base64.channel.k8s.io"],
    )
    frames = _frames(ws)
    ws.close()
    assert frames[0][0] == websocket.ABNF.OPCODE_TEXT and frames[0][1][:1] == b"1"
    assert base64.b64decode(frames[0][1][1:]) == PRELOAD.encode()
    # channel.k8s.io (v1): the error channel carries only a failure's message, no Status
    ws = _ws(emulator, "command=nosuch&container=app&stdout=true", ["channel.k8s.io"])
    frames = _frames(ws)
    ws.close()
    assert len(frames) == 1 and frames[0][1][:1] == b"\x03"
    assert frames[0][1][1:].startswith(b"Internal error occurred: error executing command in")


def test_pings_get_pongs_and_delay_holds_the_exit(emulator: Emulator) -> None:
    started = time.monotonic()
    ws = _ws(
        emulator, "command=nvidia-smi&command=-L&container=app&stdout=true", ["v5.channel.k8s.io"]
    )
    ws.ping(b"are-you-there")
    seen = []
    while True:
        opcode, frame = ws.recv_data_frame(True)
        seen.append((opcode, frame.data[:1]))
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
    ws.close()
    assert (websocket.ABNF.OPCODE_PONG, b"a") in seen
    assert seen[-2] == (websocket.ABNF.OPCODE_BINARY, b"\x03")
    assert time.monotonic() - started >= 0.3  # the recorded delay


def test_requests_refused_before_the_upgrade(emulator: Emulator) -> None:
    query = "?command=cat&container=app&stdout=true"
    code, status = _raw(emulator, "GET", EXEC_PATH + query)
    assert (code, status["message"]) == (400, "Upgrade request required")
    code, status = _raw(emulator, "PUT", EXEC_PATH + query)
    assert (code, status["reason"]) == (405, "MethodNotAllowed")
    pending = "/api/v1/namespaces/ml/pods/train-job-0/exec?command=cat&stdout=true"
    code, status = _raw(emulator, "GET", pending)
    assert (code, status["message"]) == (400, "pod train-job-0 does not have a host assigned")
    with pytest.raises(websocket.WebSocketBadStatusException) as exc:
        _ws(emulator, "command=cat&container=app")
    assert exc.value.status_code == 400
    assert b"you must specify at least 1 of stdin, stdout, stderr" in exc.value.resp_body
    with pytest.raises(websocket.WebSocketBadStatusException) as exc:
        _ws(emulator, "command=cat&container=app&stdout=true", ["v9.channel.k8s.io"])
    assert exc.value.status_code == 400


def test_discovery_lists_pods_exec(emulator: Emulator) -> None:
    code, core = _raw(emulator, "GET", "/api/v1")
    assert code == 200
    assert {
        "name": "pods/exec",
        "singularName": "",
        "namespaced": True,
        "kind": "PodExecOptions",
        "verbs": ["create", "get"],
    } in core["resources"]


def test_exec_faults_latency_and_hang(emulator: FaultyEmulator) -> None:
    emulator.faults.add(resource="pods", verb="exec", latency=0.3, count=1)
    started = time.monotonic()
    ws = _ws(emulator, "command=cat&command=/etc/ld.so.preload&container=app&stdout=true")
    assert time.monotonic() - started >= 0.3  # the handshake waited
    _frames(ws)
    ws.close()
    emulator.faults.add(resource="pods", verb="exec", hang=True)
    ws = _ws(emulator, "command=cat&command=/etc/ld.so.preload&container=app&stdout=true")
    assert ws.getstatus() == 101  # upgraded, and then nothing: the client must time out
    ws.settimeout(0.3)
    with pytest.raises(websocket.WebSocketTimeoutException):
        ws.recv_data_frame(True)
    ws.close()
    assert emulator.history[-1][2] == 101


# --- the scenario format ---------------------------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_tf_basic_has_no_execs_and_tf_exec_loads_its_own() -> None:
    assert load_scenario(TF_BASIC).execs == {}
    execs = load_scenario(TF_EXEC).execs
    assert execs[ExecKey("ml", POD, "app", ("cat", "/etc/ld.so.preload"))] == ExecReply(PRELOAD)
    grep = ("sh", "-c", 'env | grep -E "^TF_(ISOLATION_MODE|SHM_PATH)="')
    assert execs[ExecKey("ml", POD, "app", grep)].stdout.startswith("TF_ISOLATION_MODE=soft\n")
    assert execs[ExecKey("ml", POD, "app", ("nvidia-smi", "-L"))].delay == 0.3


def test_children_inherit_override_and_delete_exec_replies(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "child/scenario.yaml": f"base: {TF_EXEC}\ndelete: [Pod/tensor-fusion-sys/hypervisor-gpu-node-1]\n",
            f"child/exec/ml/{POD}/app.yaml": "- argv: [cat, /etc/ld.so.preload]\n  exit_code: 1\n",
        },
    )
    execs = load_scenario(tmp_path / "child").execs
    assert execs[ExecKey("ml", POD, "app", ("cat", "/etc/ld.so.preload"))] == ExecReply(exit_code=1)
    assert ExecKey("ml", POD, "app", ("nvidia-smi", "-L")) in execs  # inherited
    assert not [k for k in execs if k.pod == "hypervisor-gpu-node-1"]  # went with its pod


@pytest.mark.parametrize(
    ("rel", "text", "message"),
    [
        (
            "exec/ml/no-such-pod/app.yaml",
            "- argv: [cat]\n",
            r"exec/ml/no-such-pod/app.yaml: no pod ml/no-such-pod in the scenario",
        ),
        (
            f"exec/ml/{POD}/nope.yaml",
            "- argv: [cat]\n",
            rf"exec/ml/{POD}/nope.yaml: pod ml/{POD} has no container 'nope' \(it has: ",
        ),
        (f"exec/ml/{POD}.yaml", "- argv: [cat]\n", r"must be exec/<namespace>/<pod>/<container>"),
        (f"exec/ml/{POD}/app.yaml", "argv: [cat]\n", r"app.yaml: must be a list of entries"),
        (
            f"exec/ml/{POD}/app.yaml",
            "- argv: [cat]\n  exitcode: 1\n",
            r"app.yaml: entry 1: unknown key\(s\) exitcode; allowed: argv, delay",
        ),
        (f"exec/ml/{POD}/app.yaml", "- argv: [sleep, 5]\n", r"entry 1: every argv item must be"),
        (f"exec/ml/{POD}/app.yaml", "- argv: []\n", r"entry 1: argv must be a non-empty list"),
        (
            f"exec/ml/{POD}/app.yaml",
            "- argv: [cat]\n- argv: [cat]\n",
            r"entry 2: argv \['cat'\] is listed twice",
        ),
        (f"exec/ml/{POD}/app.yaml", "- argv: [cat]\n  exit_code: 300\n", r"from 0 to 255"),
        (f"exec/ml/{POD}/app.yaml", "- argv: [cat]\n  delay: -1\n", r"delay must be a number"),
    ],
)
def test_bad_exec_files_name_the_file(tmp_path: Path, rel: str, text: str, message: str) -> None:
    _write(tmp_path, {"s/scenario.yaml": f"base: {TF_EXEC}\n", f"s/{rel}": text})
    with pytest.raises(ScenarioError, match=message):
        load_scenario(tmp_path / "s")
