"""Faults injected into the emulator: errors, latency, hangs and broken answers, per resource
and verb ("exec" included), through the emulator's one seam (emulator.server.Intercept).

    with FaultyEmulator(load_scenario(path)) as emu:
        emu.faults.add(resource="gpus", verb="list", status=403)

A FaultyEmulator without faults answers exactly as a plain Emulator does.
"""

from __future__ import annotations

import contextlib
import math
import socket
import struct
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from emulator.cluster import ClusterData
from emulator.execs import ExecSession
from emulator.server import DEFAULT_USER, Emulator, Reply, Target
from emulator.status import ApiError, not_found, status_details, status_object
from emulator.transport import Answer, Handler, Response

# A hanging request is released at stop() or after this long, whichever comes first.
HANG_SECONDS = 300.0
# Answers that go wrong on the wire: the connection reset before any byte, a 200 whose JSON
# is cut and garbled, half a body and then silence, a body that never ends (chunked).
BREAKS = ("reset", "malformed", "stall", "endless")
_SELF_REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews"})


@dataclass
class Fault:
    """One injected fault: which requests it hits and what it does to them."""

    resource: str = "*"  # "pods", "gpus" or "gpus.tensor-fusion.ai"; "*" = every request
    verb: str = "*"  # list | get | log | exec | create | watch | *
    namespace: str | None = None
    name: str | None = None
    status: int | None = None  # None: only the latency
    latency: float = 0.0
    count: int | None = None  # None: always; N: the first N matching requests
    retry_after: float | None = None
    hang: bool = False
    message: str | None = None
    # Set: the fault hits every resource request *outside* these namespaces, cluster-wide and
    # cluster-scoped ones included (a user bound by RoleBindings only). Discovery and the
    # self-reviews stay allowed, as they are for every authenticated user.
    outside: tuple[str, ...] | None = None
    # How the answer breaks (see BREAKS); the request is otherwise answered for real.
    breaks: str | None = None
    hits: int = 0

    def matches(self, req: Target) -> bool:
        if self.outside is not None:
            if req.rtype is None or req.rtype.resource in _SELF_REVIEWS:
                return False
            if req.namespace in self.outside:
                return False
        if self.resource not in ("*", None) and self.resource not in _resource_names(req):
            return False
        if self.verb not in ("*", None) and self.verb != req.verb:
            return False
        if self.namespace is not None and self.namespace != req.namespace:
            return False
        return self.name is None or self.name == req.name

    @property
    def spent(self) -> bool:
        return self.count is not None and self.hits >= self.count


class Faults:
    """The faults of one emulator, its Intercept; thread-safe. `latency` applies to every
    routed request. `user` is who 403 messages say was refused."""

    def __init__(self, user: str = DEFAULT_USER) -> None:
        self.user = user
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._latency = 0.0

    @property
    def latency(self) -> float:
        with self._lock:
            return self._latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        with self._lock:
            self._latency = float(seconds)

    def add(
        self,
        resource: str = "*",
        verb: str = "*",
        namespace: str | None = None,
        name: str | None = None,
        status: int | None = None,
        latency: float = 0.0,
        count: int | None = None,
        retry_after: float | None = None,
        hang: bool = False,
        message: str | None = None,
        outside: tuple[str, ...] | None = None,
        breaks: str | None = None,
    ) -> Fault:
        if breaks is not None and breaks not in BREAKS:
            raise ValueError(f"breaks must be one of {', '.join(BREAKS)}")
        fault = Fault(
            resource,
            verb,
            namespace,
            name,
            status,
            latency,
            count,
            retry_after,
            hang,
            message,
            outside,
            breaks,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every fault and reset the global latency to 0."""
        with self._lock:
            self._faults.clear()
            self._latency = 0.0

    def take(self, target: Target) -> Fault | None:
        """The first live fault matching the request, counting it as used."""
        with self._lock:
            for fault in self._faults:
                if not fault.spent and fault.matches(target):
                    fault.hits += 1
                    return fault
        return None

    # the Intercept

    def answer(self, target: Target, reply: Reply) -> Answer:
        if self.latency > 0:
            time.sleep(self.latency)
        fault = self.take(target)
        if fault is None:
            return reply()
        if fault.latency > 0:
            time.sleep(fault.latency)
        if fault.hang:
            if target.verb == "exec":
                # Checks that precede the upgrade still apply; then the command never ends.
                answer = reply()
                if isinstance(answer, ExecSession):
                    return replace(answer, stdout=b"", stderr=b"", delay=HANG_SECONDS)
            return Hang()
        if fault.status is not None:
            raise self.error(fault, target)
        if fault.breaks is not None:
            answer = reply()
            if isinstance(answer, Response):
                return Broken(
                    answer.code, answer.body, answer.content_type, answer.headers, fault.breaks
                )
            return answer
        return reply()

    def denies(self, target: Target) -> bool:
        """Whether a 403 fault covers this access (for SelfSubjectAccessReviews)."""
        with self._lock:
            return any(f.status == 403 and not f.spent and f.matches(target) for f in self._faults)

    # the errors, worded as the API server words them

    def error(self, fault: Fault, target: Target) -> ApiError:
        code = int(fault.status or 500)
        rtype = target.rtype
        details = status_details(rtype, target.name) if rtype is not None else {}
        headers: dict[str, str] = {}
        if code == 403 and rtype is not None:
            message = fault.message or forbidden_message(target, self.user)
        elif code == 404 and rtype is not None and target.name:
            return not_found(rtype, target.name)
        elif code == 429:
            message = fault.message or "Too many requests, please try again later."
            if fault.retry_after is not None:
                seconds = max(1, math.ceil(fault.retry_after))  # the header takes whole seconds
                headers["Retry-After"] = str(seconds)
                details["retryAfterSeconds"] = seconds
        elif code == 500:
            message = f"Internal error occurred: {fault.message or 'injected fault'}"
            details["causes"] = [{"message": fault.message or "injected fault"}]
        elif code == 503:
            message = fault.message or "the server is currently unable to handle the request"
        elif code == 504:
            message = fault.message or (
                "the server was unable to return a response in the time allotted, but may "
                "still be processing the request"
            )
        else:
            message = fault.message or f"injected fault ({code})"
        return ApiError(status_object(code, message, details=details), headers)


def forbidden_message(target: Target, user: str) -> str:
    """RBAC's refusal, word for word."""
    rtype = target.rtype
    assert rtype is not None
    verb = target.rbac_verb or {"log": "get"}.get(target.verb, target.verb)
    resource = f"{rtype.resource}/log" if target.verb == "log" else rtype.resource
    if target.verb == "exec":
        resource = f"{rtype.resource}/exec"
    subject = rtype.display + (f' "{target.name}"' if target.name else "")
    scope = f'in the namespace "{target.namespace}"' if target.namespace else "at the cluster scope"
    return (
        f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
        f'in API group "{rtype.group}" {scope}'
    )


def _resource_names(target: Target) -> set[str]:
    if target.rtype is None:
        return set()
    return {target.rtype.resource, target.rtype.display}


class Hang:
    """No answer at all: the connection stays silent until the emulator stops (or
    HANG_SECONDS), then closes."""

    code = 0

    def send(self, handler: Handler) -> None:
        handler.server.stopping.wait(HANG_SECONDS)
        handler.close_connection = True


@dataclass
class Broken(Response):
    """A real answer that goes wrong on the wire, as `how` (one of BREAKS) says."""

    how: str = "reset"

    def send(self, handler: Handler) -> None:
        handler.close_connection = True
        stopping = handler.server.stopping
        if self.how == "reset":
            # Linger 0: close() sends RST, as a crashed proxy or server would.
            handler.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            return
        if self.how == "malformed":
            body = self.body[: len(self.body) // 2] + b"\x00<html>502 Bad Gateway"
            handler.send_head(self, len(body))
            handler.wfile.write(body)
            return
        if self.how == "stall":
            handler.send_head(self, len(self.body) + 1)
            handler.wfile.write(self.body[: len(self.body) // 2])
            handler.wfile.flush()
            stopping.wait(HANG_SECONDS)
            return
        # endless: the answer repeated for ever, until the client goes away or we stop.
        handler.send_head(self, None)
        chunk = (self.body or b"x\n") * max(1, 65536 // max(1, len(self.body)))
        frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        with contextlib.suppress(OSError):
            while not stopping.is_set():
                handler.wfile.write(frame)
                handler.wfile.flush()
                stopping.wait(0.002)


class FaultyEmulator(Emulator):
    """An Emulator whose routed requests go through `faults` (none at first)."""

    def __init__(
        self, data: ClusterData, host: str = "127.0.0.1", port: int = 0, **options: Any
    ) -> None:
        self.faults = Faults(options.get("user", DEFAULT_USER))
        super().__init__(data, host, port, intercept=self.faults, **options)
