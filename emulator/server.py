"""The emulator: a read-only Kubernetes API server on loopback that serves a `ClusterData`.

The real kubectl and the real `kubernetes` client talk to it: discovery, plain and aggregated
(discovery.py); get/list with label and field selectors, pagination and server-side Tables
(objects.py); pod logs (logs.py); pod exec over WebSocket, replies recorded in the scenario
(execs.py); access reviews; Status errors worded like the real API (status.py); all over HTTP
(transport.py). This module routes each request to its answer.

    with Emulator(load_scenario(path)) as emu:
        emu.write_kubeconfig(tmp / "kubeconfig")

One seam, `Intercept`, lets a test put something between a routed request and its answer.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from k8s.types import SUBRESOURCES, ResourceType

from . import discovery, protobuf
from .cluster import ClusterData
from .execs import POD_KEY, ExecSession, exec_session
from .logs import log_response, pod_container
from .objects import Objects
from .status import (
    ApiError,
    bad_request,
    method_not_allowed,
    no_such_path,
    not_found,
    status_object,
    unsupported_media_type,
)
from .transport import JSON, Answer, HTTPServer, Request, Response

DEFAULT_USER = "system:serviceaccount:default:tf-support"


@dataclass
class Target:
    """What a routed request addresses, in RBAC's terms (what an Intercept matches on)."""

    verb: str  # list | get | log | exec | create
    rtype: ResourceType | None = None  # None: a path that is not a resource (discovery)
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    # The verb RBAC checks when it differs from `verb` (exec: "get" for GET, "create" for POST).
    rbac_verb: str | None = None


Reply = Callable[[], Answer]


class Intercept(Protocol):
    """What a test puts between the API and its answers: tests/faultkit.py injects faults
    (errors, latency, hangs, broken answers) through it, a benchmark adds latency. Without
    one, every routed request gets the API's own answer and every access review is allowed."""

    def answer(self, target: Target, reply: Reply) -> Answer:
        """The answer to a request routed to `target`. `reply()` computes the API's own answer
        and may raise ApiError, as this may. Requests that cannot be routed (no such path,
        a method not allowed) are answered before this is asked."""
        ...

    def denies(self, target: Target) -> bool:
        """Whether a SelfSubjectAccessReview of `target` answers allowed: false."""
        ...


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
        intercept: Intercept | None = None,
    ) -> None:
        self.data = data
        self.verbose = verbose
        self.user = user
        self.aggregated_discovery = aggregated_discovery
        self.intercept = intercept
        # (method, path with query, HTTP code) of recent requests, newest last.
        self.history: deque[tuple[str, str, int]] = deque(maxlen=10_000)
        self._count = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._foreground = False
        self._objects = Objects(data)
        self._httpd = HTTPServer((host, port), self.handle, verbose=verbose)

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
            self._httpd.stopping.set()
            self._httpd.server_close()

    def stop(self) -> None:
        """Stop serving; waiting answers are released. Safe to call more than once."""
        self._httpd.stopping.set()
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

    def kubeconfig_text(self, context: str = "tf-emulated", namespace: str | None = None) -> str:
        """A kubeconfig (no auth) pointing at this emulator, as YAML text."""
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
        return yaml.safe_dump(config, sort_keys=False)

    def write_kubeconfig(
        self, path: Path | str, context: str = "tf-emulated", namespace: str | None = None
    ) -> Path:
        """Write `kubeconfig_text()` to `path` (the tests' own files); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.kubeconfig_text(context, namespace), encoding="utf-8")
        return path

    def objects(self, rtype: ResourceType) -> list[dict[str, Any]]:
        """The objects served for a type, sorted by namespace then name."""
        return self._objects.items(rtype)

    # request handling

    def handle(self, req: Request) -> Answer:
        """Answer one request: a Response, or an ExecSession (the connection switches to it)."""
        with self._lock:
            self._count += 1
        started = time.monotonic()
        answer: Answer
        try:
            answer = self._answer(req)
        except ApiError as err:
            answer = Response.json(err.code, err.status, **err.headers)
        except Exception as exc:  # the server must outlive any bug in one answer
            answer = Response.json(500, status_object(500, f"Internal error occurred: {exc!r}"))
        self.history.append((req.method, req.path_with_query, answer.code))
        if self.verbose:
            took = (time.monotonic() - started) * 1000
            print(
                f"{req.method} {req.path_with_query} -> {answer.code} ({took:.1f} ms)",
                file=sys.stderr,
                flush=True,
            )
        return answer

    def _answer(self, req: Request) -> Answer:
        reply, target = self._route(req)
        if self.intercept is None:
            return reply()
        return self.intercept.answer(target, reply)

    # routing

    def _route(self, req: Request) -> tuple[Reply, Target]:
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
        data, aggregated = self.data, self.aggregated_discovery
        if path == "/version":
            return lambda: Response.json(200, data.server_version)
        if path in ("/healthz", "/livez", "/readyz"):
            return lambda: Response(200, b"ok", "text/plain; charset=utf-8")
        if path == "/api":
            address = f"{self.host}:{self.port}"
            return lambda: discovery.core_versions(
                data, req.accept, aggregated=aggregated, address=address
            )
        if path == "/apis":
            return lambda: discovery.group_list(data, req.accept, aggregated=aggregated)
        if parts[:1] == ["api"] and len(parts) == 2:
            return lambda: discovery.resource_list(data, "", parts[1])
        if parts[:1] == ["apis"] and len(parts) == 2:
            return lambda: discovery.api_group(data, parts[1])
        if parts[:1] == ["apis"] and len(parts) == 3:
            return lambda: discovery.resource_list(data, parts[1], parts[2])
        return None

    def _resource_route(
        self, req: Request, group: str, version: str, rest: list[str]
    ) -> tuple[Reply, Target]:
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
            return (lambda: self._objects.get(req, rtype, namespace, name)), Target(
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
        return (lambda: self._objects.list(req, rtype, namespace)), Target("list", rtype, namespace)

    # pods: logs and exec

    def _pod(self, rtype: ResourceType, ns: str, name: str) -> dict[str, Any]:
        pod = self._objects.find(rtype, ns, name)
        if pod is None:
            raise not_found(rtype, name)
        return pod

    def _log(self, req: Request, rtype: ResourceType, ns: str, name: str) -> Response:
        return log_response(req, self._pod(rtype, ns, name), ns, name, self.data.logs)

    def _exec(self, req: Request, rtype: ResourceType, ns: str, name: str) -> ExecSession:
        # The API server's checks, in its order, all before the upgrade (so they are plain
        # HTTP errors); what the container does comes after it, on the error channel.
        pod = self._pod(rtype, ns, name)
        container = pod_container(req, pod, name)  # exec shares the API's wording
        return exec_session(req, pod, container, self.data.execs)

    # access reviews

    def _review(self, req: Request, rtype: ResourceType) -> Response:
        body = _review_body(req)
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
        denied = (
            reviewed is not None and self.intercept is not None and self.intercept.denies(reviewed)
        )
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


def _review_body(req: Request) -> Any:
    """The posted review, decoded by its Content-Type as the API server does: JSON when none is
    given, protobuf (kubectl >= 1.36), and 415 for any other type, which tells client-go to
    retry a CBOR request as JSON."""
    media_type = req.headers.get("content-type", JSON).split(";")[0].strip().lower() or JSON
    try:
        if media_type == protobuf.MEDIA_TYPE:
            return protobuf.decode_review(req.body)
        if media_type == JSON:
            return json.loads(req.body or b"{}")
    except ValueError as exc:
        raise bad_request(f"the body of the request was in an unknown format: {exc}") from None
    raise unsupported_media_type([JSON, protobuf.MEDIA_TYPE])


def _at(items: list[str], index: int) -> str | None:
    return items[index] if len(items) > index else None
