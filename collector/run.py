"""The collection core: options in, bundle and result out. Never prints."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__
from .bundle import BundleWriter, dump_json, log_member, objects_member
from .errors import UnreachableError
from .health import unhealthy_reason
from .kube import CallFailed, Kube, connect
from .plan import (
    ALL_NAMESPACES,
    EVENTS,
    TF_GROUP,
    TF_NAMESPACE,
    DescribeStep,
    ListStep,
    LogStep,
    Resource,
    Step,
    default_plan,
)


@dataclass(frozen=True)
class CollectOptions:
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str = "tensor-fusion-sys"
    release: str = "tensor-fusion-sys"
    output: Path | None = None
    tail: int = 200
    since_seconds: int | None = None
    concurrency: int = 8
    qps: float = 20.0
    request_timeout: float = 30.0


@dataclass
class CollectResult:
    path: Path
    size: int
    artifacts: list[dict[str, Any]]
    duration_s: float
    requests: int

    def by_status(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for art in self.artifacts:
            counts[art["status"]] = counts.get(art["status"], 0) + 1
        return counts

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [a for a in self.artifacts if a["status"] in ("forbidden", "timeout", "error")]


ProgressFn = Callable[[str, int, int], None]  # (what just finished, done, total)


def default_output(context: str | None, now: datetime) -> Path:
    ctx = re.sub(r"[^A-Za-z0-9._-]", "_", context or "cluster")
    return Path(f"tf-bundle-{ctx}-{now.strftime('%Y%m%dT%H%M%SZ')}.tar.zst")


def now_utc() -> datetime:
    # SOURCE_DATE_EPOCH makes regenerated sample bundles reproducible.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), timezone.utc)
    return datetime.now(timezone.utc).replace(microsecond=0)


def collect(opts: CollectOptions, progress: ProgressFn | None = None) -> CollectResult:
    conn = connect(opts.kubeconfig, opts.context)
    kube = Kube(conn, qps=opts.qps, timeout=opts.request_timeout)
    started = time.monotonic()
    created = now_utc()
    out = opts.output or default_output(conn.context, created)
    writer = BundleWriter(out)
    try:
        run = _Run(kube, opts, writer, progress or (lambda *_: None))
        run.execute(default_plan())
        manifest = run.manifest(created, conn.context, time.monotonic() - started)
        path = writer.finish(manifest)
    except BaseException:
        writer.abort()
        raise
    return CollectResult(
        path=path,
        size=path.stat().st_size,
        artifacts=manifest["artifacts"],
        duration_s=time.monotonic() - started,
        requests=kube.requests,
    )


@dataclass
class _Run:
    kube: Kube
    opts: CollectOptions
    writer: BundleWriter
    progress: ProgressFn
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    # (group, resource, namespace or None) -> uid -> object; merged over list calls.
    store: dict[tuple[str, str, str | None], dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )
    kinds: dict[tuple[str, str], Resource] = field(default_factory=dict)
    server_version: dict[str, Any] = field(default_factory=dict)
    tf_installed: bool | None = None
    _done: int = 0
    _total: int = 0

    # ------------------------------------------------------------------ phases
    def execute(self, plan: Iterable[Step]) -> None:
        steps = list(plan)
        self._preflight()
        lists = [s for s in steps if isinstance(s, ListStep)]
        jobs: list[Callable[[], None]] = []
        for step in lists:
            jobs.extend(self._list_jobs(step))
        self._total = len(jobs)
        self._run_jobs(jobs)
        later: list[Callable[[], None]] = []
        for step in steps:
            if isinstance(step, LogStep):
                later.extend(self._log_jobs(step))
            elif isinstance(step, DescribeStep):
                later.extend(self._describe_jobs(step))
        self._total += len(later)
        self._run_jobs(later)
        self._write_objects()

    def _run_jobs(self, jobs: list[Callable[[], None]]) -> None:
        with ThreadPoolExecutor(max_workers=self.opts.concurrency) as pool:
            for fut in [pool.submit(job) for job in jobs]:
                fut.result()

    def _preflight(self) -> None:
        try:
            self.server_version = self.kube.get_json("/version")
        except CallFailed as exc:
            raise UnreachableError(
                f"the API server at {self.kube.conn.server} did not answer: {exc.message}"
            ) from None
        try:
            self.kube.get_json(f"/apis/{TF_GROUP}")
            self.tf_installed = True
        except CallFailed as exc:
            self.tf_installed = False if exc.status == "not_found" else None

    # ------------------------------------------------------------------ lists
    def _namespace(self, spec: str | None) -> str | None:
        if spec == TF_NAMESPACE:
            return self.opts.namespace
        if spec == ALL_NAMESPACES:
            return None
        return spec

    def _list_jobs(self, step: ListStep) -> list[Callable[[], None]]:
        jobs = []
        for res in step.resources:
            for selector in step.label_selectors:
                jobs.append(lambda r=res, s=selector: self._list(step, r, s))
        return jobs

    def _list(self, step: ListStep, res: Resource, selector: str | None) -> None:
        ns = self._namespace(step.namespace) if res.namespaced else None
        art: dict[str, Any] = {
            "id": _artifact_id("objects", res.display, ns or "", selector or ""),
            "step": step.id,
            "scope": step.scope,
            "type": "objects",
            "group": res.group,
            "version": res.version,
            "resource": res.resource,
            "kind": res.kind,
            "namespaced": res.namespaced,
            "namespace": ns,
            "label_selector": selector,
            "paths": [],
        }
        t0 = time.monotonic()
        try:
            if res.group == TF_GROUP and self.tf_installed is False:
                raise CallFailed(
                    "not_found",
                    f"the {TF_GROUP} API group is not served: TensorFusion CRDs are not installed",
                )
            listing = self.kube.list(res.path(ns), label_selector=selector)
            items = listing.get("items") or []
            for item in items:
                item.setdefault("apiVersion", f"{res.group}/{res.version}" if res.group else "v1")
                item.setdefault("kind", res.kind)
                meta = item.setdefault("metadata", {})
                key = (res.group, res.resource, meta.get("namespace") if res.namespaced else None)
                uid = meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
                self.store.setdefault(key, {})[uid] = item
                member = objects_member(res.resource, res.group, key[2])
                if member not in art["paths"]:
                    art["paths"].append(member)
            if not items and ns is not None:
                self.store.setdefault((res.group, res.resource, ns), {})
                art["paths"].append(objects_member(res.resource, res.group, ns))
            elif not items and not res.namespaced:
                self.store.setdefault((res.group, res.resource, None), {})
                art["paths"].append(objects_member(res.resource, res.group, None))
            self.kinds[(res.group, res.resource)] = res
            art.update(status="ok", count=len(items))
            art["paths"].sort()
        except CallFailed as exc:
            art.update(status=exc.status, message=exc.message)
        art["duration_ms"] = int((time.monotonic() - t0) * 1000)
        self._record(art, f"{res.display} {ns or ''}".strip())

    # ------------------------------------------------------------------ logs
    def _pods(self, namespace: str | None = None) -> list[dict[str, Any]]:
        found = []
        for (group, resource, ns), items in self.store.items():
            if group == "" and resource == "pods" and (namespace is None or ns == namespace):
                found.extend(items.values())
        return sorted(found, key=lambda p: (p["metadata"].get("namespace"), p["metadata"]["name"]))

    def _log_jobs(self, step: LogStep) -> list[Callable[[], None]]:
        jobs = []
        for pod in self._pods(self.opts.namespace):
            labels = pod["metadata"].get("labels") or {}
            if labels.get("tensor-fusion.ai/component") != step.component:
                continue
            spec = pod.get("spec") or {}
            status = pod.get("status") or {}
            restarts = {
                cs.get("name"): cs.get("restartCount", 0)
                for cs in (status.get("containerStatuses") or [])
                + (status.get("initContainerStatuses") or [])
            }
            groups = [(spec.get("containers") or [], False)]
            if step.init_containers:
                groups.append((spec.get("initContainers") or [], True))
            for containers, is_init in groups:
                for container in containers:
                    name = container.get("name", "")
                    jobs.append(lambda p=pod, c=name, i=is_init: self._log(step, p, c, i, False))
                    if restarts.get(name, 0) > 0:
                        jobs.append(lambda p=pod, c=name, i=is_init: self._log(step, p, c, i, True))
        return jobs

    def _log(self, step: LogStep, pod: dict[str, Any], container: str, init: bool, prev: bool):
        meta = pod["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        art: dict[str, Any] = {
            "id": _artifact_id("log", ns, name, container, "previous" if prev else "current"),
            "step": step.id,
            "scope": step.scope,
            "type": "log",
            "namespace": ns,
            "pod": name,
            "container": container,
            "init_container": init,
            "previous": prev,
            "paths": [],
        }
        t0 = time.monotonic()
        try:
            text = self.kube.log(
                ns,
                name,
                container,
                previous=prev,
                tail=self.opts.tail,
                since_seconds=self.opts.since_seconds,
            )
            lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
            member = log_member(ns, name, container, prev)
            self.writer.put(member, text.encode())
            art.update(paths=[member], lines=lines)
            # The API sends at most --tail lines; a full page means older lines were left.
            art["status"] = "truncated" if lines >= self.opts.tail else "ok"
            if art["status"] == "truncated":
                art["message"] = f"newest {self.opts.tail} lines kept"
        except CallFailed as exc:
            art.update(status=exc.status, message=exc.message)
        art["duration_ms"] = int((time.monotonic() - t0) * 1000)
        self._record(art, f"logs {ns}/{name}/{container}{' (previous)' if prev else ''}")

    # ------------------------------------------------------------------ describe
    def _describe_jobs(self, step: DescribeStep) -> list[Callable[[], None]]:
        jobs = []
        for pod in self._pods():
            if unhealthy_reason(pod) is None:
                continue
            ns = pod["metadata"].get("namespace")
            if ns == self.opts.namespace:
                continue  # every event of the TF namespace is collected already
            jobs.append(lambda p=pod: self._pod_events(step, p))
        return jobs

    def _pod_events(self, step: DescribeStep, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        selector = f"involvedObject.kind=Pod,involvedObject.name={name}"
        art: dict[str, Any] = {
            "id": _artifact_id("objects", "events", ns, name),
            "step": step.id,
            "scope": step.scope,
            "type": "objects",
            "group": "",
            "version": "v1",
            "resource": "events",
            "kind": "Event",
            "namespaced": True,
            "namespace": ns,
            "field_selector": selector,
            "paths": [],
        }
        t0 = time.monotonic()
        try:
            listing = self.kube.list(EVENTS.path(ns), field_selector=selector)
            items = listing.get("items") or []
            bucket = self.store.setdefault(("", "events", ns), {})
            for item in items:
                item.setdefault("apiVersion", "v1")
                item.setdefault("kind", "Event")
                m = item.setdefault("metadata", {})
                bucket[m.get("uid") or m.get("name", "")] = item
            self.kinds[("", "events")] = EVENTS
            art.update(status="ok", count=len(items), paths=[objects_member("events", "", ns)])
        except CallFailed as exc:
            art.update(status=exc.status, message=exc.message)
        art["duration_ms"] = int((time.monotonic() - t0) * 1000)
        self._record(art, f"events of {ns}/{name}")

    # ------------------------------------------------------------------ output
    def _record(self, art: dict[str, Any], label: str) -> None:
        art.setdefault("message", "")
        self.artifacts.append(art)
        self._done += 1
        self.progress(label, self._done, self._total)

    def _write_objects(self) -> None:
        for (group, resource, ns), items in sorted(
            self.store.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")
        ):
            res = self.kinds.get((group, resource))
            kind = res.kind if res else ""
            ordered = sorted(
                items.values(),
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")),
            )
            listing = {
                "apiVersion": f"{group}/{res.version}" if group and res else "v1",
                "kind": f"{kind}List",
                "metadata": {},
                "items": ordered,
            }
            self.writer.put(objects_member(resource, group, ns), dump_json(listing))

    def manifest(self, created: datetime, context: str | None, elapsed: float) -> dict[str, Any]:
        opts = self.opts
        arts = sorted(self.artifacts, key=lambda a: a["id"])
        return {
            "format_version": 1,
            "tool": {"name": "tf-collect", "version": __version__},
            "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "duration_ms": int(elapsed * 1000),
            "options": {
                "namespace": opts.namespace,
                "release": opts.release,
                "context": context,
                "tail_lines": opts.tail,
                "since_seconds": opts.since_seconds,
                "concurrency": opts.concurrency,
                "qps": opts.qps,
                "timeout_seconds": opts.request_timeout,
            },
            "time_window": {"since_seconds": opts.since_seconds, "tail_lines": opts.tail},
            "cluster": {
                "server_version": self.server_version.get("gitVersion"),
                "platform": self.server_version.get("platform"),
                "context": context,
            },
            "tensorfusion": {
                "namespace": opts.namespace,
                "release": opts.release,
                "version": self._tf_version(),
                "installed": self.tf_installed,
            },
            "redaction": {"enabled": False, "counts": {}, "files": {}},
            "artifacts": arts,
        }

    def _tf_version(self) -> str | None:
        deployments = self.store.get(("apps", "deployments", self.opts.namespace), {})
        for dep in deployments.values():
            labels = dep["metadata"].get("labels") or {}
            if labels.get("tensor-fusion.ai/component") != "operator":
                continue
            for c in dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
                image = c.get("image", "")
                if c.get("name") in ("controller", "manager") and ":" in image.rsplit("/", 1)[-1]:
                    return image.rsplit(":", 1)[-1]
        return None


def _artifact_id(*parts: str) -> str:
    return ":".join(p for p in parts if p) or "artifact"
