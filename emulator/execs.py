"""pods/exec, the server side: what a command answers and how the answer travels.

The API server's checks come before the upgrade, as plain HTTP errors; what the container does
comes after it, on the channels of the channel.k8s.io protocols over WebSocket (RFC 6455):
stdout, stderr, and a Status on the error channel. Replies are the scenario's recorded ones; a
command without one answers like a missing binary.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import shlex
import socket
import struct
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, ClassVar

from .cluster import ExecKey, ExecReply
from .status import bad_request
from .transport import Handler, Request

POD_KEY = ("", "pods")
# pods/exec in discovery: its kind and verbs (GET or POST opens it).
EXEC_SUBRESOURCE = ("PodExecOptions", ("create", "get"))
# A container runtime takes this long, at least, to start an exec'd process. kubectl registers
# its stdout and stderr streams only after it starts reading frames; a frame sent before then
# is dropped ("Unknown stream id 2, discarding message"), so output waits as the runtime's would.
EXEC_START_SECONDS = 0.03
# Exec subprotocols in the API server's order of preference: the newest one a client offers
# wins. v4 and v5 carry a JSON Status on the error channel, the older ones only a message.
EXEC_PROTOCOLS = (
    "v5.channel.k8s.io",
    "v4.channel.k8s.io",
    "v4.base64.channel.k8s.io",
    "channel.k8s.io",
    "base64.channel.k8s.io",
)
STDOUT, STDERR, ERROR = 1, 2, 3  # exec channels (0 is stdin, which no recorded command reads)
_SHELLS = {"sh", "bash", "ash", "dash"}


@dataclass(frozen=True)
class ExecSession:
    """An exec the emulator accepted: sending it switches protocols and plays it."""

    code: ClassVar[int] = 101
    protocol: str  # the negotiated subprotocol; "" when the client offered none
    accept: str  # Sec-WebSocket-Accept
    stdout: bytes = b""
    stderr: bytes = b""
    # The Status for the error channel: Success, NonZeroExitCode or InternalError.
    status: dict[str, Any] = field(default_factory=lambda: exec_status(0))
    delay: float = 0.0  # between the output and the status, cut short when the server stops

    def send(self, handler: Handler) -> None:
        handler.close_connection = True  # the connection is the WebSocket's from here on
        ExecStream(handler, self, handler.server.stopping).play()


def exec_session(
    req: Request, pod: dict[str, Any], container: str, replies: Mapping[ExecKey, ExecReply]
) -> ExecSession:
    """The API server's checks on an exec into a found pod and container, then its reply."""
    meta = pod.get("metadata") or {}
    name = str(meta.get("name") or "")
    argv = tuple(req.multi.get("command") or ())
    if not argv:
        raise bad_request("you must specify at least one command for the container")
    if not any(req.flag(stream) for stream in ("stdin", "stdout", "stderr")):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    if not (pod.get("spec") or {}).get("nodeName"):
        raise bad_request(f"pod {name} does not have a host assigned")
    protocol = _exec_protocol(req)
    session = ExecSession(protocol, websocket_accept(req.headers["sec-websocket-key"]))
    if not _is_running(pod, container):
        # The kubelet only finds running containers; the API server reports its refusal.
        cause = f'unable to upgrade connection: container not found ("{container}")'
        return replace(session, status=exec_internal_error(cause))
    key = ExecKey(str(meta.get("namespace") or ""), name, container, argv)
    reply = replies.get(key)
    if reply is None:
        reply, status = _unrecorded(key)
    else:
        status = exec_status(reply.exit_code, argv)
    stdout = reply.stdout.encode() if req.flag("stdout") else b""
    stderr = reply.stderr.encode() if req.flag("stderr") else b""
    if req.flag("tty"):  # a terminal has one output stream
        stdout, stderr = stdout + stderr, b""
    return replace(session, stdout=stdout, stderr=stderr, status=status, delay=reply.delay)


def exec_status(exit_code: int, argv: tuple[str, ...] = ()) -> dict[str, Any]:
    """The Status the kubelet sends on the error channel when a command exits."""
    if exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    # containerd's words, as the kubelet wraps them (Go prints argv as [a b c])
    cause = f"error executing command [{' '.join(argv)}], exit code {exit_code}"
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: {cause}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]},
    }


def exec_internal_error(cause: str) -> dict[str, Any]:
    """The Status for a command that could not be started at all (apierrors.NewInternalError)."""
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {cause}",
        "reason": "InternalError",
        "details": {"causes": [{"message": cause}]},
        "code": 500,
    }


def _exec_protocol(req: Request) -> str:
    """The subprotocol for this upgrade request, or a 400 like the API server's."""
    upgrade = req.headers.get("upgrade", "").strip().lower()
    if upgrade.startswith("spdy/"):
        raise bad_request(
            "this emulator serves exec over WebSocket only (v5.channel.k8s.io, "
            "v4.channel.k8s.io), not SPDY; kubectl >= 1.30 uses WebSocket"
        )
    if upgrade != "websocket":
        raise bad_request("Upgrade request required")
    connection = {t.strip().lower() for t in req.headers.get("connection", "").split(",")}
    if "upgrade" not in connection or not req.headers.get("sec-websocket-key"):
        raise bad_request("websocket: the client is not using the websocket protocol")
    if req.headers.get("sec-websocket-version", "").strip() != "13":
        raise bad_request("websocket: unsupported version: only version 13 is supported")
    offered = [
        p.strip() for p in req.headers.get("sec-websocket-protocol", "").split(",") if p.strip()
    ]
    if not offered:
        return ""  # channel.k8s.io, without naming it
    for protocol in EXEC_PROTOCOLS:
        if protocol in offered:
            return protocol
    raise bad_request(
        f"requested protocol(s) are not supported: [{' '.join(offered)}]; "
        f"supports [{' '.join(EXEC_PROTOCOLS)}]"
    )


def _is_running(pod: dict[str, Any], container: str) -> bool:
    # A hand-written pod may leave a container's status out: it counts as running then.
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    for part in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(part) or []:
            if cs.get("name") == container:
                return "running" in (cs.get("state") or {})
    return True


def _unrecorded(key: ExecKey) -> tuple[ExecReply, dict[str, Any]]:
    """A command the scenario has no reply for: it answers like a missing binary."""
    argv = key.argv
    if argv[0].rsplit("/", 1)[-1] in _SHELLS and len(argv) >= 3 and argv[1] == "-c":
        shell, word = argv[0].rsplit("/", 1)[-1], _first_word(argv[2])
        if not word:
            return ExecReply(), exec_status(0, argv)  # sh -c '' does nothing, successfully
        said = f"line 1: {word}: command not found" if shell == "bash" else f"{word}: not found"
        return ExecReply(stderr=f"{shell}: {said}\n", exit_code=127), exec_status(127, argv)
    if "/" in argv[0]:
        missing = f'exec: "{argv[0]}": stat {argv[0]}: no such file or directory'
    else:
        missing = f'exec: "{argv[0]}": executable file not found in $PATH'
    exec_id = uuid.uuid5(uuid.NAMESPACE_URL, repr(key)).hex * 2  # containerd's 64 hex digits
    cause = (
        "error executing command in container: failed to exec in container: failed to start "
        f'exec "{exec_id}": OCI runtime exec failed: exec failed: unable to start container '
        f"process: {missing}: unknown"
    )
    return ExecReply(), exec_internal_error(cause)


def _first_word(script: str) -> str:
    """The command a shell script starts with, past any VAR=value assignments."""
    try:
        words = shlex.split(script, comments=True)
    except ValueError:  # unbalanced quotes: the shell would fail too, on the first word
        words = script.split()
    for word in words:
        name, eq, _ = word.partition("=")
        if not (eq and name.isidentifier()):
            return word
    return ""


# --- WebSocket (RFC 6455) --------------------------------------------------------------------

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_OP_TEXT, _OP_BINARY, _OP_CLOSE, _OP_PING, _OP_PONG = 0x1, 0x2, 0x8, 0x9, 0xA
_CHUNK = 32 * 1024  # the kubelet copies output in 32 KiB pieces: one message each
_MAX_CLIENT_FRAME = 1 << 20  # clients send only control frames and tiny stdin/resize data


def websocket_accept(key: str) -> str:
    """Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 section 4.2.2)."""
    digest = hashlib.sha1((key.strip() + _WS_GUID).encode("ascii")).digest()
    return base64.b64encode(digest).decode("ascii")


def websocket_frame(opcode: int, payload: bytes) -> bytes:
    """One final, unmasked frame (servers never mask)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


def read_websocket_frame(rfile: BinaryIO) -> tuple[int, bytes] | None:
    """(opcode, unmasked payload) of the next frame; None at the end of the stream."""
    head = rfile.read(2)
    if len(head) < 2:
        return None
    opcode, length = head[0] & 0x0F, head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", _read_exact(rfile, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", _read_exact(rfile, 8))[0]
    if length > _MAX_CLIENT_FRAME:
        raise ValueError(f"client frame of {length} bytes")
    mask = _read_exact(rfile, 4) if head[1] & 0x80 else b""
    payload = _read_exact(rfile, length)
    if mask and payload:
        keys = (mask * (length // 4 + 1))[:length]
        payload = (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(
            length, "big"
        )
    return opcode, payload


def _read_exact(rfile: BinaryIO, n: int) -> bytes:
    data = rfile.read(n) if n else b""
    if len(data) < n:
        raise ValueError("the connection ended inside a frame")
    return data


class ExecStream:
    """Plays one ExecSession over a handler's connection, as the kubelet's exec stream."""

    def __init__(self, handler: Handler, session: ExecSession, stopping: threading.Event) -> None:
        self.handler = handler
        self.session = session
        self.stopping = stopping
        self.gone = threading.Event()  # the client closed or dropped the connection
        self._lock = threading.Lock()  # one writer at a time: the player and the pong answers
        self._closed = False  # we sent our close frame: nothing may follow it

    def play(self) -> None:
        session, handler = self.session, self.handler
        handler.send_response(101, "Switching Protocols")
        handler.send_header("Upgrade", "websocket")
        handler.send_header("Connection", "Upgrade")
        handler.send_header("Sec-WebSocket-Accept", session.accept)
        if session.protocol:
            handler.send_header("Sec-WebSocket-Protocol", session.protocol)
        handler.end_headers()
        # Reading runs beside writing: kubectl pings every few seconds and must get its pongs.
        reader = threading.Thread(target=self._read_client, name="k8s-emulator-exec", daemon=True)
        reader.start()
        try:
            if self._wait(EXEC_START_SECONDS):
                return
            self._channel(STDOUT, session.stdout)
            self._channel(STDERR, session.stderr)
            if session.delay and self._wait(session.delay):
                return
            self._status()
            self._send(_OP_CLOSE, struct.pack("!H", 1000))
            self.gone.wait(1.0)  # give the client the time to answer our close
        except OSError:
            pass  # the client went away mid-answer, e.g. a client that timed out
        finally:
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            reader.join(timeout=1.0)

    def _wait(self, seconds: float) -> bool:
        """Sleep; True when cut short by the client leaving or the server stopping."""
        end = time.monotonic() + seconds
        while not (self.gone.is_set() or self.stopping.is_set()):
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.gone.wait(min(left, 0.05))
        return True

    def _send(self, opcode: int, payload: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = opcode == _OP_CLOSE
            self.handler.wfile.write(websocket_frame(opcode, payload))

    def _channel(self, channel: int, data: bytes) -> None:
        encoded = "base64" in self.session.protocol
        for start in range(0, len(data), _CHUNK):
            chunk = data[start : start + _CHUNK]
            if encoded:  # the channel as an ASCII digit, the data in base64, in text frames
                self._send(_OP_TEXT, str(channel).encode() + base64.b64encode(chunk))
            else:
                self._send(_OP_BINARY, bytes([channel]) + chunk)

    def _status(self) -> None:
        status = self.session.status
        if self.session.protocol.startswith(("v4.", "v5.")):
            self._channel(ERROR, json.dumps(status, separators=(",", ":")).encode())
        elif status.get("status") != "Success":
            self._channel(ERROR, str(status.get("message", "")).encode())  # v1: text only

    def _read_client(self) -> None:
        try:
            while True:
                frame = read_websocket_frame(self.handler.rfile)
                if frame is None:
                    return
                opcode, payload = frame
                if opcode == _OP_PING:
                    self._send(_OP_PONG, payload)
                elif opcode == _OP_CLOSE:
                    self._send(_OP_CLOSE, payload[:2])  # no-op when ours went first
                    return
                # Data frames (stdin, terminal resizes, v5 close signals) have no reader here.
        except (OSError, ValueError):
            return
        finally:
            self.gone.set()
