"""HTTP on loopback: requests parsed, answers written, connections tracked so a stop cuts them.

The server knows nothing of Kubernetes: it hands each `Request` to one `answer` callable and
lets the `Answer` it gets back write itself on the connection (a `Response` as a plain HTTP
answer; an exec session switches protocols, see execs.py).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from .status import bad_request

JSON = "application/json"


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

    @property
    def path_with_query(self) -> str:
        """The path and the (first value of each) query parameter, as logs show them."""
        if not self.query:
            return self.path
        return self.path + "?" + "&".join(f"{k}={v}" for k, v in self.query.items())

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


class Answer(Protocol):
    """What a request gets back: it writes itself on the handler's connection."""

    @property
    def code(self) -> int:
        """The HTTP status it sends (101 for a switch of protocols)."""
        ...

    def send(self, handler: Handler) -> None: ...


@dataclass
class Response:
    """A plain HTTP answer with a body of known length."""

    code: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, code: int, obj: Any, content_type: str = JSON, **headers: str) -> Response:
        return cls(code, json.dumps(obj, separators=(",", ":")).encode(), content_type, headers)

    def send(self, handler: Handler) -> None:
        handler.send_head(self, len(self.body))
        handler.wfile.write(self.body)


def media_ranges(accept: str) -> Iterator[tuple[str, dict[str, str]]]:
    """(media type, parameters) of each range in an Accept header, in order."""
    for item in accept.split(","):
        mtype, *params = [p.strip() for p in item.split(";")]
        kv = dict(p.split("=", 1) for p in params if "=" in p)
        yield mtype.lower(), {k.strip(): v.strip() for k, v in kv.items()}


class HTTPServer(ThreadingHTTPServer):
    """Answers every request with `answer(request)`, each connection in its own thread."""

    daemon_threads = True
    request_queue_size = 128  # the default 5 drops concurrent connects (SYN retry: +1 s)
    block_on_close = False
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        answer: Callable[[Request], Answer],
        *,
        verbose: bool = False,
    ) -> None:
        self.answer = answer
        self.verbose = verbose
        # Set when the server stops: an answer that waits (an exec's delay) lets go then.
        self.stopping = threading.Event()
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, Handler)

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
        if self.verbose:
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK would
    # stall every answer by ~40 ms.
    disable_nagle_algorithm = True
    server_version = "tf-support-emulator"
    sys_version = ""
    server: HTTPServer

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
        pass  # the emulator logs (when verbose) with the outcome, in Emulator.handle()

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        req = Request.parse(
            method, self.path, self.headers.get("Accept", ""), body, dict(self.headers.items())
        )
        self.server.answer(req).send(self)

    def send_head(self, resp: Response, length: int | None) -> None:
        """The status line and headers of `resp`; `length` None: a chunked body follows."""
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
