"""Kubernetes access for the collector, over the official client.

Objects are fetched raw (the JSON the API server sent, not the client's models) so the
bundle holds them exactly as the API returned them. Every call has a timeout, goes through
a shared client-side QPS limiter, honours 429 Retry-After, and ends as data: a result or a
`CallFailed` with one of the manifest's statuses. Nothing here prints.

Stopping. Every wait (the QPS limiter, a 429's Retry-After, a retry's pause) is a wait on the
run's stop event, so a Ctrl-C reaches threads that wait in them at once: they raise `Stopped`,
which no step turns into an artifact.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import urllib3
from kubernetes.client.exceptions import ApiException

from .diagnosis import Diagnosis, diagnose
from .kubeconfig import Connection

MAX_RETRY_AFTER = 10.0  # seconds we are willing to wait for one 429
MAX_ANSWER_BYTES = 256 * 1024 * 1024  # one answer; the analyzer refuses bigger members too


class CallFailed(Exception):
    """One API call that did not succeed; `status` is a manifest status. `diagnosis` says
    why a TLS handshake or a proxy failed, for the one line a failed preflight ends with."""

    def __init__(
        self,
        status: str,
        message: str,
        http_status: int | None = None,
        diagnosis: Diagnosis | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.http_status = http_status
        self.diagnosis = diagnosis


class Stopped(Exception):
    """The run was stopped (Ctrl-C) while this call waited: no artifact, no retry."""


class RateLimiter:
    """A token bucket shared by every worker thread (client-side QPS limit)."""

    def __init__(
        self, qps: float, burst: int | None = None, stop: threading.Event | None = None
    ) -> None:
        self.interval = 1.0 / qps
        self.capacity = float(burst or max(1, int(qps)))
        self.tokens = self.capacity
        self.last = time.monotonic()
        self.lock = threading.Lock()
        self.stop = stop or threading.Event()

    def acquire(self) -> None:
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.last) / self.interval)
                self.last = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                wait = (1 - self.tokens) * self.interval
            pause(self.stop, wait)


def pause(stop: threading.Event, seconds: float) -> None:
    """Wait `seconds`, or raise Stopped as soon as the run is stopped."""
    if stop.wait(seconds):
        raise Stopped


class Kube:
    """The small cluster-access interface the collection plan runs on."""

    def __init__(
        self,
        conn: Connection,
        *,
        qps: float = 20.0,
        timeout: float = 30.0,
        page_size: int = 500,
        retries: int = 3,
    ) -> None:
        self.conn = conn
        self._stop = threading.Event()
        self.limiter = RateLimiter(qps, burst=max(1, int(qps)), stop=self._stop)
        self.timeout = timeout
        self.page_size = page_size
        self.retries = retries
        self._count = 0
        self._count_lock = threading.Lock()
        self._access: dict[tuple[str, str, str, str, str], bool | None] = {}

    def stop(self) -> None:
        """End every wait now and start no more calls (Ctrl-C); a call in flight ends with
        Stopped when its answer comes."""
        self._stop.set()

    @property
    def requests(self) -> int:
        return self._count

    def get_raw(self, path: str, query: list[tuple[str, str]] | None = None) -> bytes:
        """GET one path; retries 429 (Retry-After), 5xx and dropped connections a few times."""
        return self._request("GET", path, query, None)

    def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST for the review APIs (SelfSubjectAccessReview); never used to change state."""
        raw = self._request("POST", path, None, body)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise CallFailed("error", f"the API server sent invalid JSON for {path}") from exc

    def can(
        self,
        verb: str,
        resource: str,
        *,
        namespace: str | None = None,
        group: str = "",
        subresource: str = "",
    ) -> bool | None:
        """Whether RBAC allows it (SelfSubjectAccessReview); None when that cannot be asked."""
        key = (verb, group, resource, subresource, namespace or "")
        with self._count_lock:
            if key in self._access:
                return self._access[key]
        attrs = {"verb": verb, "resource": resource, "group": group}
        if subresource:
            attrs["subresource"] = subresource
        if namespace:
            attrs["namespace"] = namespace
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs},
        }
        try:
            answer = self.post_json(
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review
            )
            allowed: bool | None = bool((answer.get("status") or {}).get("allowed"))
        except CallFailed:
            allowed = None  # unknown: just try the call and record what happens
        with self._count_lock:
            self._access[key] = allowed
        return allowed

    def _request(
        self, verb: str, path: str, query: list[tuple[str, str]] | None, body: dict[str, Any] | None
    ) -> bytes:
        api = self.conn.api_client
        attempt = 0
        while True:
            attempt += 1
            self.limiter.acquire()
            with self._count_lock:
                self._count += 1
            headers_in = {"Accept": "application/json, */*"}
            if body is not None:
                headers_in["Content-Type"] = "application/json"
            method, url, headers, payload, post = api.param_serialize(
                verb,
                path,
                query_params=query or [],
                header_params=headers_in,
                body=body,
                auth_settings=["BearerToken"],
            )
            try:
                resp = api.call_api(
                    method, url, headers, payload, post, _request_timeout=self.timeout
                )
                data = self._body(resp.response, path)
            except (
                ApiException,
                urllib3.exceptions.ProxyError,
                urllib3.exceptions.SSLError,
            ) as exc:
                # The client raises ApiException(status=0) only for a TLS failure; a proxy's
                # refusal is not a dropped connection to retry either.
                found = diagnose(exc, self.conn.route)
                raise CallFailed("error", found.cause, diagnosis=found) from exc
            except urllib3.exceptions.NewConnectionError as exc:
                # Refused, or a host name that does not resolve: urllib3 files these under
                # timeouts, but no time ran out.
                raise CallFailed("error", f"connection failed: {_reason(exc)}") from exc
            except (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.TimeoutError) as exc:
                raise CallFailed("timeout", f"no answer within {self.timeout:g}s") from exc
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if attempt <= self.retries and isinstance(exc, urllib3.exceptions.ProtocolError):
                    pause(self._stop, 0.2 * attempt)
                    continue
                raise CallFailed("error", f"connection failed: {_reason(exc)}") from exc
            if self._stop.is_set():
                raise Stopped  # the run is over: nothing more is written
            if 200 <= resp.status < 300:
                return data
            if attempt <= self.retries and resp.status in (429, 500, 502, 503, 504):
                pause(self._stop, _retry_delay(resp.getheader("Retry-After"), attempt))
                continue
            raise _failure(resp.status, resp.reason, data)

    def _body(self, raw: urllib3.BaseHTTPResponse, path: str) -> bytes:
        """The whole answer, within the request timeout and MAX_ANSWER_BYTES: the read timeout
        alone never ends an answer that keeps trickling (a log stream that never stops)."""
        deadline = time.monotonic() + self.timeout
        chunks, total = [], 0
        try:
            for chunk in raw.stream(256 * 1024):
                chunks.append(chunk)
                total += len(chunk)
                if total > MAX_ANSWER_BYTES:
                    raise CallFailed(
                        "error", f"the answer for {path} is over {MAX_ANSWER_BYTES >> 20} MiB"
                    )
                if time.monotonic() > deadline:
                    raise CallFailed("timeout", f"the answer did not end within {self.timeout:g}s")
        except CallFailed:
            raw.close()  # the rest is never read: this connection cannot be reused
            raise
        finally:
            raw.release_conn()
        return b"".join(chunks)

    def get_json(self, path: str, query: list[tuple[str, str]] | None = None) -> dict[str, Any]:
        raw = self.get_raw(path, query)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise CallFailed("error", f"the API server sent invalid JSON for {path}") from exc

    def list(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> dict[str, Any]:
        """A whole list, page by page; returns one List object with every item."""
        query: list[tuple[str, str]] = [("limit", str(self.page_size))]
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        first: dict[str, Any] | None = None
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            page = self.get_json(path, [*query, ("continue", token)] if token else query)
            if first is None:
                first = page
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                break
        assert first is not None
        first["items"] = items
        first.setdefault("metadata", {}).pop("continue", None)
        first["metadata"].pop("remainingItemCount", None)
        return first

    def log(
        self,
        namespace: str,
        pod: str,
        container: str,
        *,
        previous: bool,
        tail: int | None,
        since_seconds: int | None = None,
        limit_bytes: int | None = None,
    ) -> str:
        query = [("container", container)]
        if tail is not None:
            query.append(("tailLines", str(tail)))
        if limit_bytes:
            query.append(("limitBytes", str(limit_bytes)))
        if previous:
            query.append(("previous", "true"))
        if since_seconds:
            query.append(("sinceSeconds", str(since_seconds)))
        try:
            raw = self.get_raw(f"/api/v1/namespaces/{namespace}/pods/{pod}/log", query)
        except CallFailed as exc:
            # The kubelet answers 400 when there is no previous container, or when the
            # container never started (ContainerCreating, PodInitializing): that is absence
            # of a log, not a failure to collect one.
            if exc.http_status == 400 and (
                "not found" in exc.message or "waiting to start" in exc.message
            ):
                raise CallFailed("not_found", exc.message, 400) from None
            raise
        return raw.decode("utf-8", errors="replace")


def _failure(status: int, reason: str | None, body: bytes) -> CallFailed:
    message = reason or "error"
    with contextlib.suppress(ValueError, AttributeError):  # not a Status object: keep reason
        message = json.loads(body or b"{}").get("message") or message
    kind = {401: "forbidden", 403: "forbidden", 404: "not_found", 504: "timeout"}.get(
        status, "error"
    )
    return CallFailed(kind, f"{status}: {message}", status)


def _retry_delay(header: str | None, attempt: int) -> float:
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(header)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return min(MAX_RETRY_AFTER, 0.25 * 2**attempt)


def _reason(exc: Exception) -> str:
    inner = getattr(exc, "reason", None)
    return str(inner or exc).split(": ", 1)[-1][:200]
