"""A read-only Kubernetes API server on loopback that serves a `ClusterData`.

The real kubectl and the real `kubernetes` client talk to it: discovery (plain and aggregated),
get/list with label and field selectors and pagination, server-side Tables, pod logs, pod exec
over WebSocket (the channel.k8s.io protocols, replies recorded in the scenario), and Status
errors worded like the real API. Faults (403/404/429/500/503, latency, hangs) can be injected
per resource and verb ("exec" included) for tests.

    with Emulator(load_scenario(path)) as emu:
        emu.write_kubeconfig(tmp / "kubeconfig")
        emu.faults.add(resource="gpus", verb="list", status=403)
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import math
import shlex
import socket
import struct
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs, urlsplit

import yaml

from k8s.events import core_to_events_v1, events_v1_to_core
from k8s.selectors import (
    SelectorError,
    parse_field_selector,
    parse_label_selector,
    supported_fields,
)
from k8s.tables import build_table, partial_metadata
from k8s.types import (
    CATEGORIES,
    CRD_KEY,
    SECRET_KEY,
    SUBRESOURCES,
    ResourceType,
    group_rank,
    version_priority,
)

from .cluster import ClusterData, ExecKey, ExecReply, LogKey
from .scenario import HELM_SECRET_TYPE

DEFAULT_USER = "system:serviceaccount:default:tf-support"
JSON = "application/json"
AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# A hanging request is released at stop() or after this long, whichever comes first.
HANG_SECONDS = 300.0
# A container runtime takes this long, at least, to start an exec'd process. kubectl registers
# its stdout and stderr streams only after it starts reading frames; a frame sent before then
# is dropped ("Unknown stream id 2, discarding message"), so output waits as the runtime's would.
EXEC_START_SECONDS = 0.03
# Containers in these waiting states have never run, so they have no log yet.
_NEVER_STARTED = {
    "ContainerCreating",
    "PodInitializing",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}
POD_KEY = ("", "pods")
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


# --- Status objects --------------------------------------------------------------------------

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Gone",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_object(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A metav1.Status with status Failure, as the API server sends for every error."""
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or _REASONS.get(code, "Unknown"),
        "code": code,
    }
    if details is not None:
        out["details"] = details
    return out


class ApiError(Exception):
    """An error answer: a Status object with its HTTP code (and extra headers)."""

    def __init__(self, status: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status["message"])
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return int(self.status["code"])


def _qualified(rtype: ResourceType) -> str:
    return f"{rtype.resource}.{rtype.group}" if rtype.group else rtype.resource


def _details(rtype: ResourceType, name: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if rtype.group:
        out["group"] = rtype.group
    out["kind"] = rtype.resource
    return out


def not_found(rtype: ResourceType, name: str) -> ApiError:
    return ApiError(
        status_object(404, f'{_qualified(rtype)} "{name}" not found', details=_details(rtype, name))
    )


def no_such_path() -> ApiError:
    return ApiError(
        status_object(404, "the server could not find the requested resource", details={})
    )


def bad_request(message: str) -> ApiError:
    return ApiError(status_object(400, message))


def method_not_allowed() -> ApiError:
    return ApiError(
        status_object(
            405, "the server does not allow this method on the requested resource", details={}
        )
    )


# --- faults ----------------------------------------------------------------------------------


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
        if self.resource not in ("*", None) and self.resource not in req.resource_names:
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
    """The faults of one emulator; thread-safe. `latency` applies to every request."""

    def __init__(self) -> None:
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

    def denies(self, target: Target) -> bool:
        """Whether a 403 fault covers this access (for SelfSubjectAccessReviews)."""
        with self._lock:
            return any(f.status == 403 and not f.spent and f.matches(target) for f in self._faults)


# --- requests --------------------------------------------------------------------------------


@dataclass
class Target:
    """What a request addresses, in the terms faults and RBAC messages use."""

    verb: str
    rtype: ResourceType | None = None
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    # The verb RBAC checks when it differs from `verb` (exec: "get" for GET, "create" for POST).
    rbac_verb: str | None = None

    @property
    def resource_names(self) -> set[str]:
        if self.rtype is None:
            return set()
        return {self.rtype.resource, _qualified(self.rtype)}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    accept: str
    body: bytes = b""
    # Every value of repeated parameters (exec's command=..&command=..), in order.
    multi: dict[str, list[str]] = field(default_factory=dict)
    # Request headers with lower-case names (the WebSocket upgrade needs a few).
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        method: str,
        raw_path: str,
        accept: str,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> Request:
        parts = urlsplit(raw_path)
        multi = parse_qs(parts.query, keep_blank_values=True)
        query = {k: v[0] for k, v in multi.items()}
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        return cls(method, parts.path or "/", query, accept or "", body, multi, lowered)

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("true", "1")

    def int_param(self, name: str) -> int | None:
        value = self.query.get(name)
        if value in (None, ""):
            return None
        try:
            return int(value)
        except ValueError:
            raise bad_request(f"{name}: Invalid value: {value!r}: must be an integer") from None


@dataclass
class Response:
    code: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    breaks: str | None = None  # a fault: how sending this answer goes wrong

    @classmethod
    def json(cls, code: int, obj: Any, content_type: str = JSON, **headers: str) -> Response:
        return cls(code, json.dumps(obj, separators=(",", ":")).encode(), content_type, headers)


@dataclass(frozen=True)
class ExecSession:
    """An exec the emulator accepted: the handler switches protocols and plays it."""

    protocol: str  # the negotiated subprotocol; "" when the client offered none
    accept: str  # Sec-WebSocket-Accept
    stdout: bytes = b""
    stderr: bytes = b""
    # The Status for the error channel: Success, NonZeroExitCode or InternalError.
    status: dict[str, Any] = field(default_factory=lambda: exec_status(0))
    delay: float = 0.0
    hang: bool = False  # upgrade, then never finish (a fault)


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


def _media_ranges(accept: str) -> Iterator[tuple[str, dict[str, str]]]:
    for item in accept.split(","):
        mtype, *params = [p.strip() for p in item.split(";")]
        kv = dict(p.split("=", 1) for p in params if "=" in p)
        yield mtype.lower(), {k.strip(): v.strip() for k, v in kv.items()}


def _wanted_shape(accept: str) -> tuple[str, str]:
    """("table"|"partial"|"json", meta.k8s.io version) chosen from the Accept header."""
    for mtype, params in _media_ranges(accept or JSON):
        if mtype not in (JSON, "*/*", "application/*"):
            continue  # protobuf, yaml: we only speak JSON and fall through to it
        if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            if params.get("as") == "Table":
                return "table", params["v"]
            if params.get("as", "").startswith("PartialObjectMetadata"):
                return "partial", params["v"]
            continue
        if not params.get("as"):
            return "json", "v1"
    return "json", "v1"


def _wants_aggregated(accept: str) -> str | None:
    for mtype, params in _media_ranges(accept):
        if (
            mtype == JSON
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("as") == "APIGroupDiscoveryList"
            and params.get("v") in ("v2", "v2beta1")
        ):
            return params["v"]
    return None


# --- the emulator ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    """One type's served objects: sorted for lists, indexed for gets."""

    token: tuple[Any, ...]
    items: list[dict[str, Any]]
    by_ident: dict[tuple[str, str], dict[str, Any]]


# Answers that go wrong on the wire: the connection reset before any byte, a 200 whose JSON
# is cut and garbled, half a body and then silence, a body that never ends (chunked).
BREAKS = ("reset", "malformed", "stall", "endless")
_SELF_REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews"})
_NONE: list[dict[str, Any]] = []  # one empty list, so its id is stable in view tokens
_EVENT_VIEWS = {
    ("", "events"): ("events.k8s.io", "events"),
    ("events.k8s.io", "events"): ("", "events"),
}


class Emulator:
    """Serve `data` over HTTP on host:port (port 0 picks a free one)."""

    def __init__(
        self,
        data: ClusterData,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        verbose: bool = False,
        user: str = DEFAULT_USER,
        aggregated_discovery: bool = True,
    ) -> None:
        self.data = data
        self.faults = Faults()
        self.verbose = verbose
        self.user = user
        self.aggregated_discovery = aggregated_discovery
        # (method, path with query, HTTP code) of recent requests, newest last.
        self.history: deque[tuple[str, str, int]] = deque(maxlen=10_000)
        self._count = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._foreground = False
        self._views: dict[tuple[str, str], _View] = {}
        self._view_lock = threading.Lock()
        self._rv: tuple[Any, str] = ((), "1")
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.emulator = self

    # lifecycle

    @property
    def host(self) -> str:
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> int:
        with self._lock:
            return self._count

    def start(self) -> Emulator:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"k8s-emulator-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until stop() from another thread, or Ctrl-C."""
        self._foreground = True
        try:
            self._httpd.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            self._foreground = False
            self._stopping.set()
            self._httpd.server_close()

    def stop(self) -> None:
        """Stop serving; hanging requests are released. Safe to call more than once."""
        self._stopping.set()
        if self._thread is not None or self._foreground:
            self._httpd.shutdown()
        self._httpd.drop_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_kubeconfig(
        self, path: Path | str, context: str = "tf-emulated", namespace: str | None = None
    ) -> Path:
        """Write a kubeconfig (no auth) pointing at this emulator; returns the path."""
        ctx: dict[str, Any] = {"cluster": context, "user": context}
        if namespace:
            ctx["namespace"] = namespace
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
            "users": [{"name": context, "user": {}}],
            "preferences": {},
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        return path

    # request handling

    def handle(self, req: Request) -> Response | ExecSession | None:
        """Answer one request; None means: drop the connection without an answer (hang).
        An ExecSession means: switch protocols and play it (the handler does)."""
        with self._lock:
            self._count += 1
        started = time.monotonic()
        try:
            resp = self._answer(req)
        except ApiError as err:
            resp = Response.json(err.code, err.status, **err.headers)
        except Exception as exc:  # the server must outlive any bug in one answer
            resp = Response.json(500, status_object(500, f"Internal error occurred: {exc!r}"))
        code = 101 if isinstance(resp, ExecSession) else resp.code if resp is not None else 0
        self.history.append((req.method, _with_query(req), code))
        if self.verbose:
            took = (time.monotonic() - started) * 1000
            print(
                f"{req.method} {_with_query(req)} -> {code or 'hang'} ({took:.1f} ms)",
                file=sys.stderr,
                flush=True,
            )
        return resp

    def _answer(self, req: Request) -> Response | ExecSession | None:
        if self.faults.latency > 0:
            time.sleep(self.faults.latency)
        handler, target = self._route(req)
        fault = self.faults.take(target)
        if fault is not None:
            if fault.latency > 0:
                time.sleep(fault.latency)
            if fault.hang:
                if target.verb == "exec":
                    # Checks that precede the upgrade still apply; then the command never ends.
                    answer = handler()
                    if isinstance(answer, ExecSession):
                        return replace(answer, hang=True)
                self._stopping.wait(HANG_SECONDS)
                return None
            if fault.status is not None:
                raise self._fault_error(fault, target)
            if fault.breaks is not None:
                answer = handler()
                if isinstance(answer, Response):
                    return replace(answer, breaks=fault.breaks)
                return answer
        return handler()

    def _fault_error(self, fault: Fault, target: Target) -> ApiError:
        code = int(fault.status or 500)
        rtype = target.rtype
        details = _details(rtype, target.name) if rtype is not None else {}
        headers: dict[str, str] = {}
        if code == 403 and rtype is not None:
            message = fault.message or self._forbidden_message(target)
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

    def _forbidden_message(self, target: Target) -> str:
        rtype = target.rtype
        assert rtype is not None
        verb = target.rbac_verb or {"log": "get"}.get(target.verb, target.verb)
        resource = f"{rtype.resource}/log" if target.verb == "log" else rtype.resource
        if target.verb == "exec":
            resource = f"{rtype.resource}/exec"
        subject = _qualified(rtype) + (f' "{target.name}"' if target.name else "")
        scope = (
            f'in the namespace "{target.namespace}"' if target.namespace else "at the cluster scope"
        )
        return (
            f'{subject} is forbidden: User "{self.user}" cannot {verb} resource "{resource}" '
            f'in API group "{rtype.group}" {scope}'
        )

    # routing

    def _route(self, req: Request) -> tuple[Callable[[], Response | ExecSession], Target]:
        path = req.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        plain = self._non_resource(req, path)
        if plain is not None:
            if req.method != "GET":
                raise method_not_allowed()
            return plain, Target("get")
        if not parts or parts[0] not in ("api", "apis"):
            raise no_such_path()
        if parts[0] == "api":
            group, version, rest = "", parts[1] if len(parts) > 1 else "", parts[2:]
        else:
            group = parts[1] if len(parts) > 1 else ""
            version, rest = (parts[2] if len(parts) > 2 else ""), parts[3:]
        if not rest:
            raise no_such_path()
        return self._resource_route(req, group, version, rest)

    def _non_resource(self, req: Request, path: str) -> Callable[[], Response] | None:
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return lambda: Response.json(200, self.data.server_version)
        if path in ("/healthz", "/livez", "/readyz"):
            return lambda: Response(200, b"ok", "text/plain; charset=utf-8")
        if path == "/api":
            return lambda: self._core_versions(req)
        if path == "/apis":
            return lambda: self._group_list(req)
        if parts[:1] == ["api"] and len(parts) == 2:
            return lambda: self._resource_list("", parts[1])
        if parts[:1] == ["apis"] and len(parts) == 2:
            return lambda: self._group(parts[1])
        if parts[:1] == ["apis"] and len(parts) == 3:
            return lambda: self._resource_list(parts[1], parts[2])
        return None

    def _resource_route(
        self, req: Request, group: str, version: str, rest: list[str]
    ) -> tuple[Callable[[], Response | ExecSession], Target]:
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise no_such_path()
        resource, name, sub = rest[0], _at(rest, 1), _at(rest, 2)
        rtype = self.data.types.get((group, resource))
        if rtype is None or rtype.version != version:
            raise no_such_path()
        if (namespace is not None and not rtype.namespaced) or (
            namespace is None and rtype.namespaced and name is not None
        ):
            raise no_such_path()
        if sub == "exec" and rtype.key == POD_KEY and namespace is not None and name is not None:
            # The one verb that is not a GET: kubectl and the client open it with GET or POST.
            if req.method not in ("GET", "POST"):
                raise method_not_allowed()
            verb = "get" if req.method == "GET" else "create"
            target = Target("exec", rtype, namespace, name, sub, rbac_verb=verb)
            return (lambda: self._exec(req, rtype, namespace, name)), target
        if sub is not None:
            if sub not in SUBRESOURCES.get(rtype.key, {}) or req.method != "GET":
                raise no_such_path() if req.method == "GET" else method_not_allowed()
            target = Target("log", rtype, namespace, name, sub)
            return (lambda: self._log(req, rtype, namespace or "", name or "")), target
        if req.method == "POST" and name is None and "create" in rtype.verbs:
            return (lambda: self._review(req, rtype)), Target("create", rtype, namespace)
        if req.method != "GET" or "list" not in rtype.verbs:
            raise method_not_allowed()
        if name is not None:
            return (lambda: self._get(req, rtype, namespace, name)), Target(
                "get", rtype, namespace, name
            )
        if req.flag("watch"):
            raise ApiError(
                status_object(
                    405,
                    "watch is not supported by this read-only emulator",
                    reason="MethodNotAllowed",
                    details={},
                )
            )
        return (lambda: self._list(req, rtype, namespace)), Target("list", rtype, namespace)

    # objects

    def objects(self, rtype: ResourceType) -> list[dict[str, Any]]:
        """The objects served for a type, sorted by namespace then name."""
        return self._view(rtype).items

    def _object(self, rtype: ResourceType, ns: str | None, name: str) -> dict[str, Any] | None:
        return self._view(rtype).by_ident.get((ns or "", name))

    def _view(self, rtype: ResourceType) -> _View:
        # Sorting thousands of objects on every request made the emulator, not the client,
        # the bottleneck of a large collection; the view is rebuilt only when the data changes.
        other = _EVENT_VIEWS.get(rtype.key)
        own = self.data.objects.get(rtype.key, _NONE)
        theirs = self.data.objects.get(other, _NONE) if other else _NONE
        token = (self.data.revision, id(own), len(own), id(theirs), len(theirs))
        view = self._views.get(rtype.key)
        if view is not None and view.token == token:
            return view
        with self._view_lock:  # one thread builds, the others wait for it
            view = self._views.get(rtype.key)
            if view is None or view.token != token:
                view = self._build_view(rtype, own, theirs, token)
                self._views[rtype.key] = view
        return view

    def _build_view(
        self,
        rtype: ResourceType,
        own: list[dict[str, Any]],
        theirs: list[dict[str, Any]],
        token: tuple[Any, ...],
    ) -> _View:
        items = list(own)
        if rtype.key == SECRET_KEY:
            # Only Helm's release records (a scenario's helm/ files), whatever the data holds.
            items = [o for o in items if o.get("type") == HELM_SECRET_TYPE]
        if theirs:
            # One event store, two API views: each group also serves the other's events.
            convert = core_to_events_v1 if rtype.group else events_v1_to_core
            seen = {_ns_name(o) for o in own}
            items += [convert(o) for o in theirs if _ns_name(o) not in seen]
        by_ident = {_ns_name(o): o for o in items}
        return _View(token, sorted(items, key=_ns_name), by_ident)

    def _resource_version(self) -> str:
        token = (self.data.revision, tuple(len(v) for v in self.data.objects.values()))
        with self._lock:
            if self._rv[0] == token:
                return self._rv[1]
        top = 0
        for objs in self.data.objects.values():
            for obj in objs:
                rv = str(obj.get("metadata", {}).get("resourceVersion", ""))
                if rv.isdigit():
                    top = max(top, int(rv))
        with self._lock:
            self._rv = (token, str(top or 1))
        return self._rv[1]

    def _get(self, req: Request, rtype: ResourceType, ns: str | None, name: str) -> Response:
        obj = self._object(rtype, ns, name)
        if obj is None:
            raise not_found(rtype, name)
        return self._shaped(req, rtype, [obj], single=True)

    def _list(self, req: Request, rtype: ResourceType, ns: str | None) -> Response:
        try:
            labels = parse_label_selector(req.query.get("labelSelector"))
            fields = parse_field_selector(req.query.get("fieldSelector"))
            paths = self._field_paths(rtype)
            fields.check_supported(paths)
        except SelectorError as err:
            raise bad_request(str(err)) from None
        items = [
            o
            for o in self.objects(rtype)
            if (ns is None or _ns_name(o)[0] == ns)
            and labels.matches(o.get("metadata", {}).get("labels"))
            and fields.matches(o, paths)
        ]
        rv = self._resource_version()
        items, meta = self._page(req, items, rv)
        return self._shaped(req, rtype, items, single=False, list_meta=meta)

    def _field_paths(self, rtype: ResourceType) -> dict[str, str]:
        paths = supported_fields(rtype.group, rtype.resource)
        crd = self._crd_object(rtype)
        for version in (crd or {}).get("spec", {}).get("versions") or []:
            if version.get("name") == rtype.version:
                for sel in version.get("selectableFields") or []:
                    path = str(sel.get("jsonPath", "")).lstrip(".")
                    paths[path] = path
        return paths

    def _crd_object(self, rtype: ResourceType) -> dict[str, Any] | None:
        want = f"{rtype.resource}.{rtype.group}"
        for crd in self.data.objects.get(CRD_KEY, []):
            if crd.get("metadata", {}).get("name") == want:
                return crd
        return None

    def _page(
        self, req: Request, items: list[dict[str, Any]], rv: str
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        meta: dict[str, Any] = {"resourceVersion": rv}
        token = req.query.get("continue")
        if token:
            start_after = _decode_continue(token, rv)
            items = [o for o in items if _ns_name(o) > start_after]
        limit = req.int_param("limit")
        if limit is not None and limit > 0 and len(items) > limit:
            meta["continue"] = _encode_continue(rv, _ns_name(items[limit - 1]))
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        return items, meta

    def _shaped(
        self,
        req: Request,
        rtype: ResourceType,
        items: list[dict[str, Any]],
        *,
        single: bool,
        list_meta: dict[str, Any] | None = None,
    ) -> Response:
        shape, meta_version = _wanted_shape(req.accept)
        meta_api = f"meta.k8s.io/{meta_version}"
        if shape == "table":
            include = req.query.get("includeObject") or "Metadata"
            if include not in ("None", "Metadata", "Object"):
                raise bad_request(f"includeObject: Unsupported value: {include!r}")
            table_meta = list_meta or {
                "resourceVersion": items[0]["metadata"].get("resourceVersion", "")
            }
            return Response.json(
                200,
                build_table(
                    rtype, items, include_object=include, list_meta=table_meta, api_version=meta_api
                ),
            )
        if shape == "partial":
            partial = [partial_metadata(o, meta_api) for o in items]
            if single:
                return Response.json(200, partial[0])
            return Response.json(
                200,
                {
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": meta_api,
                    "metadata": list_meta or {},
                    "items": partial,
                },
            )
        if single:
            return Response.json(200, items[0])
        return Response.json(
            200,
            {
                "kind": f"{rtype.kind}List",
                "apiVersion": rtype.api_version,
                "metadata": list_meta or {},
                "items": items,
            },
        )

    # logs

    def _log(self, req: Request, rtype: ResourceType, ns: str, name: str) -> Response:
        pod = self._object(rtype, ns, name)
        if pod is None:
            raise not_found(rtype, name)
        container = self._log_container(req, pod, name)
        previous = req.flag("previous")
        text = self.data.logs.get(LogKey(ns, name, container, previous))
        if text is None:
            if previous:
                raise bad_request(
                    f'previous terminated container "{container}" in pod "{name}" not found'
                )
            waiting = _waiting_reason(pod, container)
            if waiting is not None:
                raise bad_request(
                    f'container "{container}" in pod "{name}" is waiting to start: {waiting}'
                )
            text = ""
        if text and not text.endswith("\n"):
            text += "\n"
        tail = req.int_param("tailLines")
        if tail is not None and tail >= 0:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-tail:]) if tail else ""
        body = text.encode("utf-8")
        limit = req.int_param("limitBytes")
        if limit is not None and limit > 0:
            body = body[:limit]
        return Response(200, body, "text/plain")

    @staticmethod
    def _log_container(req: Request, pod: dict[str, Any], name: str) -> str:
        spec = pod.get("spec") or {}
        containers = [c.get("name") for c in spec.get("containers") or []]
        every = containers + [
            c.get("name")
            for part in ("initContainers", "ephemeralContainers")
            for c in spec.get(part) or []
        ]
        container = req.query.get("container", "")
        if not container:
            if len(containers) == 1:
                return str(containers[0])
            if not containers:
                raise bad_request(f"a container name must be specified for pod {name}")
            raise bad_request(
                f"a container name must be specified for pod {name}, "
                f"choose one of: [{' '.join(str(c) for c in containers)}]"
            )
        if container not in every:
            raise bad_request(f"container {container} is not valid for pod {name}")
        return container

    # exec

    def _exec(self, req: Request, rtype: ResourceType, ns: str, name: str) -> ExecSession:
        # The API server's checks, in its order, all before the upgrade (so they are plain
        # HTTP errors); what the container does comes after it, on the error channel.
        pod = self._object(rtype, ns, name)
        if pod is None:
            raise not_found(rtype, name)
        container = self._log_container(req, pod, name)  # exec shares the API's wording
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
        key = ExecKey(ns, name, container, argv)
        reply = self.data.execs.get(key)
        if reply is None:
            reply, status = _unrecorded(key)
        else:
            status = exec_status(reply.exit_code, argv)
        stdout = reply.stdout.encode() if req.flag("stdout") else b""
        stderr = reply.stderr.encode() if req.flag("stderr") else b""
        if req.flag("tty"):  # a terminal has one output stream
            stdout, stderr = stdout + stderr, b""
        return replace(session, stdout=stdout, stderr=stderr, status=status, delay=reply.delay)

    # access reviews

    def _review(self, req: Request, rtype: ResourceType) -> Response:
        try:
            body = json.loads(req.body or b"{}")
        except ValueError as exc:
            raise bad_request(f"the body of the request was in an unknown format: {exc}") from None
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        body.setdefault("apiVersion", rtype.api_version)
        body.setdefault("kind", rtype.kind)
        body.setdefault("metadata", {"creationTimestamp": None})
        if rtype.resource == "selfsubjectrulesreviews":
            body["status"] = {
                "resourceRules": [
                    {"verbs": ["get", "list"], "apiGroups": ["*"], "resources": ["*"]}
                ],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["*"]}],
                "incomplete": False,
            }
            return Response.json(201, body)
        attrs = (body.get("spec") or {}).get("resourceAttributes") or {}
        reviewed = self._reviewed_target(attrs)
        denied = reviewed is not None and self.faults.denies(reviewed)
        # RBAC gives no reason when it denies, so kubectl prints a bare "no".
        body["status"] = {"allowed": not denied}
        return Response.json(201, body)

    def _reviewed_target(self, attrs: dict[str, Any]) -> Target | None:
        group, resource = str(attrs.get("group", "")), str(attrs.get("resource", ""))
        rtype = self.data.types.get((group, resource))
        if rtype is None:
            return None
        verb = "log" if attrs.get("subresource") == "log" else str(attrs.get("verb", "get"))
        if attrs.get("subresource") == "exec":
            verb = "exec"
        return Target(verb, rtype, attrs.get("namespace") or None, attrs.get("name") or None)

    # discovery

    def _groups(self) -> dict[str, dict[str, list[ResourceType]]]:
        out: dict[str, dict[str, list[ResourceType]]] = {}
        for rtype in self.data.types.values():
            out.setdefault(rtype.group, {}).setdefault(rtype.version, []).append(rtype)
        return out

    def _versions_of(self, group: str) -> list[str]:
        return sorted(self._groups().get(group, {}), key=version_priority)

    def _group_entry(self, group: str) -> dict[str, Any]:
        versions = [
            {"groupVersion": f"{group}/{v}", "version": v} for v in self._versions_of(group)
        ]
        return {"name": group, "versions": versions, "preferredVersion": versions[0]}

    def _core_versions(self, req: Request) -> Response:
        if self.aggregated_discovery and (v := _wants_aggregated(req.accept)):
            return self._aggregated([""], v)
        return Response.json(
            200,
            {
                "kind": "APIVersions",
                "versions": self._versions_of("") or ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.host}:{self.port}"}
                ],
            },
        )

    def _named_groups(self) -> list[str]:
        return sorted((g for g in self._groups() if g), key=group_rank)

    def _group_list(self, req: Request) -> Response:
        if self.aggregated_discovery and (v := _wants_aggregated(req.accept)):
            return self._aggregated(self._named_groups(), v)
        groups = [self._group_entry(g) for g in self._named_groups()]
        return Response.json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})

    def _group(self, group: str) -> Response:
        if group not in self._groups() or not group:
            raise no_such_path()
        return Response.json(
            200, {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group)}
        )

    def _categories(self, rtype: ResourceType) -> tuple[str, ...]:
        if rtype.key in CATEGORIES:
            return CATEGORIES[rtype.key]
        crd = self._crd_object(rtype)
        return tuple((crd or {}).get("spec", {}).get("names", {}).get("categories") or ())

    def _api_resource(self, rtype: ResourceType) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": rtype.resource,
            "singularName": rtype.singular or rtype.kind.lower(),
            "namespaced": rtype.namespaced,
            "kind": rtype.kind,
            "verbs": list(rtype.verbs),
        }
        if rtype.short_names:
            entry["shortNames"] = list(rtype.short_names)
        if categories := self._categories(rtype):
            entry["categories"] = list(categories)
        return entry

    def _resource_list(self, group: str, version: str) -> Response:
        types = self._groups().get(group, {}).get(version)
        if not types:
            raise no_such_path()
        resources = []
        for rtype in sorted(types, key=lambda t: t.resource):
            resources.append(self._api_resource(rtype))
            for sub, (kind, verbs) in _subresources(rtype).items():
                resources.append(
                    {
                        "name": f"{rtype.resource}/{sub}",
                        "singularName": "",
                        "namespaced": rtype.namespaced,
                        "kind": kind,
                        "verbs": list(verbs),
                    }
                )
        gv = f"{group}/{version}" if group else version
        return Response.json(
            200,
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": gv,
                "resources": resources,
            },
        )

    def _aggregated(self, groups: list[str], disco_version: str) -> Response:
        items = []
        by_group = self._groups()
        for group in groups:
            versions = []
            for version in sorted(by_group.get(group, {}), key=version_priority):
                types = sorted(by_group[group][version], key=lambda t: t.resource)
                versions.append(
                    {
                        "version": version,
                        "resources": [self._aggregated_resource(t) for t in types],
                        "freshness": "Current",
                    }
                )
            meta: dict[str, Any] = {"creationTimestamp": None}
            if group:
                meta["name"] = group
            items.append({"metadata": meta, "versions": versions})
        body = {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": f"apidiscovery.k8s.io/{disco_version}",
            "metadata": {},
            "items": items,
        }
        ctype = AGGREGATED_V2.replace("v=v2", f"v={disco_version}")
        return Response.json(200, body, ctype)

    def _aggregated_resource(self, rtype: ResourceType) -> dict[str, Any]:
        kind = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
        entry: dict[str, Any] = {
            "resource": rtype.resource,
            "responseKind": kind,
            "scope": "Namespaced" if rtype.namespaced else "Cluster",
            "singularResource": rtype.singular or rtype.kind.lower(),
            "verbs": list(rtype.verbs),
        }
        if rtype.short_names:
            entry["shortNames"] = list(rtype.short_names)
        if categories := self._categories(rtype):
            entry["categories"] = list(categories)
        subs = [
            {"subresource": sub, "responseKind": {**kind, "kind": sub_kind}, "verbs": list(verbs)}
            for sub, (sub_kind, verbs) in _subresources(rtype).items()
        ]
        if subs:
            entry["subresources"] = subs
        return entry


# --- helpers ---------------------------------------------------------------------------------


def _subresources(rtype: ResourceType) -> dict[str, tuple[str, tuple[str, ...]]]:
    # pods/exec is listed like a real server's, but served here: it is not a GET.
    subs = dict(SUBRESOURCES.get(rtype.key, {}))
    if rtype.key == POD_KEY:
        subs["exec"] = ("PodExecOptions", ("create", "get"))
    return subs


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


# --- WebSocket (RFC 6455), the server side of exec -------------------------------------------

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


def _at(items: list[str], index: int) -> str | None:
    return items[index] if len(items) > index else None


def _ns_name(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _with_query(req: Request) -> str:
    if not req.query:
        return req.path
    return req.path + "?" + "&".join(f"{k}={v}" for k, v in req.query.items())


def _encode_continue(rv: str, last: tuple[str, str]) -> str:
    raw = json.dumps({"v": "emulator/1", "rv": rv, "start": list(last)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str, rv: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        start = data["start"]
        last = (str(start[0]), str(start[1]))
        token_rv = str(data["rv"])
    except (binascii.Error, ValueError, KeyError, IndexError, TypeError) as exc:
        raise bad_request(f"continue key is not valid: {exc}") from None
    if token_rv != rv:
        # The data changed since the first page: the API answers 410 Expired.
        raise ApiError(
            status_object(
                410,
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter.",
                reason="Expired",
            )
        )
    return last


def _waiting_reason(pod: dict[str, Any], container: str) -> str | None:
    status = pod.get("status") or {}
    for part in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(part) or []:
            if cs.get("name") != container:
                continue
            reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
            if reason in _NEVER_STARTED and not cs.get("restartCount"):
                return str(reason)
    return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops concurrent connects (SYN retry: +1 s)
    block_on_close = False
    allow_reuse_address = True
    emulator: Emulator

    def server_activate(self) -> None:
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().server_activate()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.open_connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.open_connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Cut every kept-alive connection: a stopped server is gone, not half there."""
        with self.connections_lock:
            conns = list(self.open_connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away mid-answer is normal here; stay quiet unless verbose.
        if self.emulator.verbose:
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK would
    # stall every answer by ~40 ms.
    disable_nagle_algorithm = True
    server_version = "tf-support-emulator"
    sys_version = ""
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_OPTIONS(self) -> None:
        self._serve("OPTIONS")

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the emulator logs (when verbose) with the outcome, in handle()

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        req = Request.parse(
            method, self.path, self.headers.get("Accept", ""), body, dict(self.headers.items())
        )
        resp = self.server.emulator.handle(req)
        if resp is None:
            self.close_connection = True
            return
        if isinstance(resp, ExecSession):
            self.close_connection = True  # the connection is the WebSocket's from here on
            _ExecStream(self, resp, self.server.emulator._stopping).play()
            return
        if resp.breaks is not None:
            self._broken(resp)
            return
        self._head(resp, len(resp.body))
        self.wfile.write(resp.body)

    def _head(self, resp: Response, length: int | None) -> None:
        self.send_response(resp.code)
        self.send_header("Content-Type", resp.content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in resp.headers.items():
            self.send_header(key, value)
        self.end_headers()

    def _broken(self, resp: Response) -> None:
        self.close_connection = True
        stopping = self.server.emulator._stopping
        if resp.breaks == "reset":
            # Linger 0: close() sends RST, as a crashed proxy or server would.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if resp.breaks == "malformed":
            body = resp.body[: len(resp.body) // 2] + b"\x00<html>502 Bad Gateway"
            self._head(resp, len(body))
            self.wfile.write(body)
            return
        if resp.breaks == "stall":
            self._head(resp, len(resp.body) + 1)
            self.wfile.write(resp.body[: len(resp.body) // 2])
            self.wfile.flush()
            stopping.wait(HANG_SECONDS)
            return
        # endless: the answer repeated for ever, until the client goes away or we stop.
        self._head(resp, None)
        chunk = (resp.body or b"x\n") * max(1, 65536 // max(1, len(resp.body)))
        frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        with contextlib.suppress(OSError):
            while not stopping.is_set():
                self.wfile.write(frame)
                self.wfile.flush()
                stopping.wait(0.002)


class _ExecStream:
    """Plays one ExecSession over a handler's connection, as the kubelet's exec stream."""

    def __init__(self, handler: _Handler, session: ExecSession, stopping: threading.Event) -> None:
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
            if session.hang:
                self._wait(HANG_SECONDS)
                return
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
        """Sleep; True when cut short by the client leaving or the emulator stopping."""
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
