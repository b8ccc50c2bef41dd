"""Read-only, time-boxed commands inside containers: the manual's in-container checks.

`run_exec` runs one argv in one container over the API server's exec WebSocket and ends as
data: an `ExecResult` whose `status` is a manifest status. Nothing here prints, and nothing
here decides what is safe to run: that is `CONTAINER_CHECKS` / `NODE_CHECKS`, which are data.

Concurrency. `kubernetes.stream.stream()` swaps `call_api` on the ApiClient *instance* it is
given for the whole call and puts back what it saw when it started. On a shared client that
breaks twice over (measured against the emulator, kubernetes 37): while one exec is open,
every plain API call other threads make through that client goes down the WebSocket path and
fails ("Handshake status 200 OK"); and two overlapping execs restore each other's patch, so
the client stays broken after both have ended. So `run_exec` never hands the caller's client
to `stream()`: each call builds a private ApiClient on the caller's Configuration (same
server, credentials and TLS settings), which makes it safe to call from any number of threads.

Time box. The client gives the WebSocket handshake no timeout at all (`create_websocket`
passes none to websocket-client), so the handshake runs on a helper thread that the caller
waits for until its deadline; reading then uses per-frame socket timeouts. A handshake the
server never answers leaves only that helper waiting, until the server answers or drops the
connection, and whatever it gets then is closed at once.
"""

from __future__ import annotations

import contextlib
import json
import textwrap
import threading
import time
from dataclasses import dataclass
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream
from websocket import (
    ABNF,
    WebSocketBadStatusException,
    WebSocketException,
    WebSocketTimeoutException,
)

# Scripts below stop their slowest tool after this long (nvidia-smi hangs with a stuck
# driver, and a process exec starts is not killed when the client goes away). Callers
# should give run_exec a timeout above it.
COMMAND_SECONDS = 20
_MAX_STATUS_BYTES = 64 * 1024
_STDOUT, _STDERR, _ERROR, _CLOSE_SIGNAL = 1, 2, 3, 255


@dataclass(frozen=True)
class ExecResult:
    """How one command went. exit_code is None when it never finished (or never started)."""

    stdout: str
    stderr: str
    exit_code: int | None
    status: str  # an artifact status of the manifest; "ok" means the command ran to its end, whatever its code
    message: str  # one line; "" for a command that exited 0
    truncated: bool


@dataclass(frozen=True)
class ExecCheck:
    """One read-only command from the troubleshooting manual, and what it covers there."""

    id: str  # "<manual section>/<name>"; the name is unique across both check lists
    manual: tuple[tuple[str, str], ...]  # (section key, the manual's command text) it covers
    argv: tuple[str, ...]

    @property
    def section(self) -> str:
        return self.id.split("/", 1)[0]


def run_exec(
    api_client: k8s.ApiClient,
    namespace: str,
    pod: str,
    container: str,
    argv: list[str],
    *,
    timeout: float,
    max_bytes: int = 1 << 20,
) -> ExecResult:
    """Run argv in the container, reading at most max_bytes of stdout+stderr, within timeout
    seconds of wall-clock time. Safe to call concurrently on one ApiClient."""
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv must be a non-empty list of strings")
    if timeout <= 0 or max_bytes < 0:
        raise ValueError("timeout must be > 0 and max_bytes >= 0")
    deadline = time.monotonic() + timeout
    handshake = _Handshake(api_client, namespace, pod, container, list(argv))
    if not handshake.wait(deadline):
        return _failed("timeout", f"the exec connection was not set up within {timeout:g}s")
    if handshake.error is not None:
        return _handshake_failure(handshake.error)
    assert handshake.ws is not None
    try:
        return _read(handshake.ws, deadline, timeout, max_bytes)
    finally:
        # timeout=0: send our close and go; waiting for the peer's would overrun the deadline
        with contextlib.suppress(OSError, WebSocketException):
            handshake.ws.close(timeout=0)


# --- the connection --------------------------------------------------------------------------


class _Handshake:
    """The WebSocket upgrade on a thread of its own, so the caller can stop waiting for it."""

    def __init__(
        self, api_client: k8s.ApiClient, namespace: str, pod: str, container: str, argv: list[str]
    ) -> None:
        self.ws: Any = None  # kubernetes.stream.ws_client.WSClient
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._abandoned = False
        self._args = (api_client, namespace, pod, container, argv)
        threading.Thread(target=self._run, name=f"tf-exec-{pod}", daemon=True).start()

    def wait(self, deadline: float) -> bool:
        if self._done.wait(max(0.0, deadline - time.monotonic())):
            return True
        with self._lock:
            self._abandoned = not self._done.is_set()
            return not self._abandoned

    def _run(self) -> None:
        api_client, namespace, pod, container, argv = self._args
        ws, error = None, None
        try:
            # A private client: stream() patches the instance it is given (module docstring).
            with k8s.ApiClient(api_client.configuration) as private:
                private.default_headers.update(api_client.default_headers)
                ws = stream(
                    k8s.CoreV1Api(private).connect_get_namespaced_pod_exec,
                    pod,
                    namespace,
                    command=argv,
                    container=container,
                    stdin=False,
                    stdout=True,
                    stderr=True,
                    tty=False,
                    _preload_content=False,
                )
        except Exception as exc:  # data for the caller, whatever the client raised
            error = exc
        with self._lock:
            self.ws, self.error = ws, error
            self._done.set()
            abandoned = self._abandoned
        if abandoned and ws is not None:
            with contextlib.suppress(OSError, WebSocketException):
                ws.close(timeout=0)


def _handshake_failure(exc: BaseException) -> ExecResult:
    # stream() wraps every failure in ApiException(status=0, reason=str(original)); the
    # original, with the HTTP status and body, is the exception it was raised from.
    cause = exc.__context__ if isinstance(exc, ApiException) else exc
    if isinstance(cause, WebSocketBadStatusException):
        code = cause.status_code
        message = _status_message(cause.resp_body) or cause.status_message or "error"
        status = {401: "forbidden", 403: "forbidden", 404: "not_found", 504: "timeout"}.get(
            code, "error"
        )
        if code == 400 and " is not valid for pod " in message:
            status = "not_found"  # the container is not in the pod: absent, as a 404 would say
        return _failed(status, f"{code}: {message}")
    reason = getattr(exc, "reason", None) or exc
    return _failed("error", f"exec connection failed: {_one_line(str(reason))}")


# --- reading ---------------------------------------------------------------------------------


def _read(ws: Any, deadline: float, timeout: float, max_bytes: int) -> ExecResult:
    """Read frames until the server closes, or the deadline, or max_bytes of output."""
    sock = ws.sock  # the websocket-client WebSocket: one frame at a time, our own timeouts
    out = _Output(max_bytes)
    late = f"the command did not finish within {timeout:g}s"
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return out.result("timeout", late)
        sock.settimeout(left)
        try:
            opcode, frame = sock.recv_data_frame(True)
        except WebSocketTimeoutException:
            return out.result("timeout", late)
        except (WebSocketException, OSError) as exc:
            return out.result("error", f"the exec connection dropped: {_one_line(str(exc))}")
        if opcode == ABNF.OPCODE_CLOSE:
            return out.ended()
        # ping and pong frames carry no channel: websocket-client answers pings itself
        data = frame.data if opcode in (ABNF.OPCODE_BINARY, ABNF.OPCODE_TEXT) else b""
        if data and not out.add(data[0], data[1:]):
            return out.result(
                "truncated", f"output exceeded {max_bytes} bytes; the rest was not read"
            )


class _Output:
    """What came on the channels; stdout and stderr share one byte budget."""

    def __init__(self, max_bytes: int) -> None:
        self.room = max_bytes
        self.channels = {_STDOUT: bytearray(), _STDERR: bytearray(), _ERROR: bytearray()}

    def add(self, channel: int, data: bytes) -> bool:
        """Keep data; False once stdout and stderr together went past the budget."""
        if channel in (_STDOUT, _STDERR):
            self.channels[channel] += data[: self.room]
            self.room -= len(data)
            return self.room >= 0
        if channel == _ERROR:
            status = self.channels[_ERROR]
            status += data[: _MAX_STATUS_BYTES - len(status)]
        return True  # _CLOSE_SIGNAL (v5: the server ends one channel) needs no action

    def result(self, status: str, message: str, exit_code: int | None = None) -> ExecResult:
        stdout, stderr = _text(self.channels[_STDOUT]), _text(self.channels[_STDERR])
        return ExecResult(stdout, stderr, exit_code, status, message, status == "truncated")

    def ended(self) -> ExecResult:
        """The outcome from the error channel's Status, as the kubelet words it."""
        raw = bytes(self.channels[_ERROR])
        if not raw:
            return self.result("error", "the exec stream ended without the command's exit status")
        try:
            status = json.loads(raw)
        except ValueError:
            status = None
        if not isinstance(status, dict):
            return self.result("error", f"unreadable exit status: {_one_line(_text(raw))}")
        if status.get("status") == "Success":
            return self.result("ok", "", 0)
        message = _one_line(str(status.get("message") or "the command failed"))
        if status.get("reason") == "NonZeroExitCode":
            for cause in (status.get("details") or {}).get("causes") or []:
                if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).isdigit():
                    return self.result("ok", message, int(cause["message"]))
        # The command never ran: no such binary, container not running, runtime errors.
        return self.result("error", message)


def _failed(status: str, message: str) -> ExecResult:
    return ExecResult("", "", None, status, message, False)


def _status_message(body: bytes | None) -> str:
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        return _one_line(str(json.loads(body or b"").get("message") or ""))
    return _one_line(_text(body or b""))


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- the manual's checks, as data ------------------------------------------------------------


def _sh(script: str) -> tuple[str, ...]:
    """A `sh -c` argv; the manual pipes, and a script can bound and guard its tools."""
    return ("sh", "-c", textwrap.dedent(script).strip())


_EXEC_NVIDIA_SMI = "kubectl exec <pod> -n <namespace> -c <container> -- nvidia-smi"
_LDCONFIG = "ldconfig -p | grep -E 'libcuda.so.1|libnvidia-ml.so.1'"

# nvidia-smi is bounded with `timeout` where the image has it (coreutils and busybox do).
_NVIDIA_SMI = _sh(
    f"""
    if command -v timeout >/dev/null 2>&1; then exec timeout {COMMAND_SECONDS} nvidia-smi; fi
    exec nvidia-smi
    """
)
# ldconfig lives in /sbin, which is not in the PATH of many non-root images.
_LDCONFIG_ARGV = _sh(f'PATH="$PATH:/sbin:/usr/sbin"; {_LDCONFIG}')

CONTAINER_CHECKS: tuple[ExecCheck, ...] = (
    ExecCheck(
        id="limits-not-enforced/ld-preload",
        manual=(
            ("limits-not-enforced", "cat /etc/ld.so.preload"),
            ("cuda-libs", "cat /etc/ld.so.preload"),
        ),
        argv=("cat", "/etc/ld.so.preload"),  # a one-line file by nature; no shell needed
    ),
    ExecCheck(
        # Every TF_* variable and LD_PRELOAD, not only the two the manual greps for: the
        # analyzer also wants TF_CUDA_LIB_PATH, TF_NVML_LIB_PATH and the limits.
        id="limits-not-enforced/tf-env",
        manual=(("limits-not-enforced", 'env | grep -E "^TF_(ISOLATION_MODE|SHM_PATH)="'),),
        argv=_sh("env | grep -E '^(TF_[A-Za-z0-9_]*|LD_PRELOAD)='"),
    ),
    ExecCheck(
        id="limits-not-enforced/shm-file",
        manual=(("limits-not-enforced", 'ls -l "$TF_SHM_PATH"'),),
        # unset, `ls -l ""` would blame a file named '' instead of the variable
        argv=_sh(
            """
            if [ -z "${TF_SHM_PATH:-}" ]; then echo "TF_SHM_PATH is not set" >&2; exit 2; fi
            ls -l "$TF_SHM_PATH"
            """
        ),
    ),
    ExecCheck(
        id="limits-not-enforced/nvidia-smi",
        manual=(
            ("limits-not-enforced", "nvidia-smi"),
            ("cuda-oom", _EXEC_NVIDIA_SMI),
            ("cuda-libs", "nvidia-smi"),
        ),
        argv=_NVIDIA_SMI,
    ),
    ExecCheck(
        # The manual: look in the application's /proc/<pid>/maps for the limiter. Prints one
        # line per process, "<pid> <name>: mapped|not mapped", never the maps; exit 0 when some
        # process maps it. The script's own shell is left out: it is preloaded like any other
        # process, which proves nothing about the application. Other collector commands that
        # run at the same time may show up, by name.
        id="limits-not-enforced/limiter-mapped",
        manual=(("limits-not-enforced", "/proc/<pid>/maps"),),
        argv=_sh(
            """
            self=$$; hit=0; n=0
            for d in /proc/[0-9]*; do
              pid=${d#/proc/}
              [ "$pid" = "$self" ] && continue
              [ -r "$d/maps" ] || continue
              n=$((n + 1)); [ "$n" -gt 1000 ] && break
              comm=$(cat "$d/comm" 2>/dev/null)
              if grep -q libcuda_limiter.so "$d/maps" 2>/dev/null; then
                echo "$pid $comm: mapped"; hit=1
              else
                echo "$pid $comm: not mapped"
              fi
            done
            [ "$hit" = 1 ]
            """
        ),
    ),
    ExecCheck(
        id="cuda-libs/ldconfig",
        manual=(("cuda-libs", _LDCONFIG),),
        argv=_LDCONFIG_ARGV,
    ),
)

# Run in each hypervisor pod's main container: privileged, with the node's driver libraries
# mounted, so it answers for the node. /etc/ld.so.preload there would be the container's own
# file, not the node's, so it is not asked for.
NODE_CHECKS: tuple[ExecCheck, ...] = (
    ExecCheck(
        id="cuda-libs/node-nvidia-smi",
        manual=(("cuda-libs", "nvidia-smi"), ("gpu-discovery", "nvidia-smi")),
        argv=_NVIDIA_SMI,
    ),
    ExecCheck(
        id="cuda-libs/node-ldconfig",
        manual=(("cuda-libs", _LDCONFIG),),
        argv=_LDCONFIG_ARGV,
    ),
    ExecCheck(
        # Kernel modules are the node's, seen from any container; /proc/modules when the
        # image has no lsmod.
        id="cuda-libs/node-lsmod",
        manual=(("cuda-libs", "lsmod | grep nvidia"),),
        argv=_sh(
            """
            if command -v lsmod >/dev/null 2>&1; then lsmod | grep nvidia; exit; fi
            grep nvidia /proc/modules
            """
        ),
    ),
)
