"""The collection core: options in, bundle and result out. Never prints.

Two phases: first the lists (what the manual's `kubectl get` commands show), then what
depends on them (logs, events of unhealthy pods, owners, in-container checks), with the
targets found from the first phase. Every call ends as an artifact with a status.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__
from .budget import DEFAULT_MAX_SIZE, HEADROOM, LogSize, estimate, plan_trim
from .bundle import (
    BundleWriter,
    exec_member,
    grep_member,
    helm_member,
    log_member,
    metrics_member,
    objects_member,
)
from .errors import ConfigError, UnreachableError
from .filters import KEEP, strip
from .health import unhealthy_reason
from .helm import RELEASE_SELECTOR, ReleaseDecodeError, latest_record, project_record
from .kube import CallFailed, Kube, connect
from .plan import (
    ALL_NAMESPACES,
    CONFIGMAPS,
    EVENTS,
    TF_GROUP,
    TF_NAMESPACE,
    WORKLOAD_NAMESPACES,
    DescribeStep,
    ExecStep,
    GrepLogStep,
    HelmStep,
    ListStep,
    LogStep,
    MetricsStep,
    Resource,
    Step,
    default_plan,
)
from .redact import Redactor, Structure, key_from_env
from .redact.mapfile import check_map_path, write_map
from .targets import PodRef, Targets, component, find_targets, ref

GREP_LIMIT_BYTES = 32 * 1024 * 1024  # the most of one log read to grep through
EVENTS_PER_POD_LIMIT = 10  # above this many unhealthy pods in a namespace, list its events once
METRICS_SQL = (
    "SELECT pool, MAX(total_allocation_fail_cnt) - MIN(total_allocation_fail_cnt) AS failures, "
    "MAX(total_allocation_success_cnt) - MIN(total_allocation_success_cnt) AS successes "
    "FROM tf_system_metrics WHERE ts > now() - INTERVAL '1 hour' GROUP BY pool ORDER BY pool"
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
    qps: float = 50.0
    request_timeout: float = 30.0
    overall_timeout: float | None = None
    pods: tuple[str, ...] = ()  # extra targets, "namespace/name"
    workload_namespaces: tuple[str, ...] = ()
    exec: bool = False
    exec_limit: int = 20
    metrics: bool = False
    greptime_namespace: str = "greptimedb"
    greptime_service: str = "greptimedb-standalone:4000"
    redact_public_ips: bool = False
    redaction_map: Path | None = None  # original -> placeholder, written outside the bundle
    max_size: int | None = DEFAULT_MAX_SIZE  # bytes of the compressed bundle; None: no budget


@dataclass
class CollectResult:
    path: Path
    size: int
    artifacts: list[dict[str, Any]]
    duration_s: float
    requests: int
    redaction: dict[str, Any] = field(default_factory=dict)
    max_size: int | None = None

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
    check_map_path(opts.redaction_map, out)
    # One redactor per run: its key exists only in this process, never in the bundle.
    redactor = Redactor(key=key_from_env(), public_ips=opts.redact_public_ips)
    writer = BundleWriter(out, redactor=redactor)
    try:
        deadline = started + opts.overall_timeout if opts.overall_timeout else None
        run = _Run(kube, opts, writer, progress or (lambda *_: None), deadline=deadline)
        run.execute(default_plan(with_exec=opts.exec, with_metrics=opts.metrics))
        manifest = run.manifest(created, conn.context, time.monotonic() - started)
        path = writer.finish(manifest)
    except KeyboardInterrupt:
        if not writer.committed:
            writer.abort()
            raise
        # The signal came as the bundle went into place: it is complete, so it stands.
        path = writer.final_path
    except BaseException:
        writer.abort()
        raise
    ignore_interrupts()
    if opts.redaction_map is not None:
        write_map(opts.redaction_map, redactor, path)
    return CollectResult(
        path=path,
        size=path.stat().st_size,
        artifacts=manifest["artifacts"],
        duration_s=time.monotonic() - started,
        requests=kube.requests,
        redaction=redactor.summary(),
        max_size=opts.max_size,
    )


def ignore_interrupts() -> None:
    """Once the bundle exists, Ctrl-C/SIGTERM cannot take it back: what is left (the map,
    the summary, exiting) runs to its end, and the exit code tells the truth."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)


Job = Callable[[], None]


@dataclass
class _Run:
    kube: Kube
    opts: CollectOptions
    writer: BundleWriter
    progress: ProgressFn
    deadline: float | None = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    # (group, resource, namespace or None) -> uid -> object; merged over list calls.
    store: dict[tuple[str, str, str | None], dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )
    kinds: dict[tuple[str, str], Resource] = field(default_factory=dict)
    server_version: dict[str, Any] = field(default_factory=dict)
    tf_installed: bool | None = None
    targets: Targets | None = None
    _logs_planned: set[tuple[str, str, str, bool]] = field(default_factory=set)
    # id(kept object) -> (the object, its structural pass); the object is held so its id
    # cannot be reused by another.
    _structured: dict[int, tuple[dict[str, Any], Structure]] = field(default_factory=dict)
    # artifact id -> (step, resource, label selector, field selector) of each list call
    _list_calls: dict[str, tuple[ListStep, Resource, str | None, str | None]] = field(
        default_factory=dict
    )
    _done: int = 0
    _total: int = 0

    # ------------------------------------------------------------------ phases
    def execute(self, plan: Iterable[Step]) -> None:
        steps = list(plan)
        self._preflight()
        first: list[Job] = []
        later: list[Step] = []
        for step in steps:
            if isinstance(step, ListStep) and step.namespace != WORKLOAD_NAMESPACES:
                first.extend(self._list_jobs(step))
            elif isinstance(step, HelmStep):
                first.append(lambda s=step: self._helm(s))
            elif isinstance(step, MetricsStep):
                first.append(lambda s=step: self._metrics(s))
            else:
                later.append(step)
        self._total = len(first)
        self._run_jobs(first)
        self._fallback_lists()
        self.targets = find_targets(self._pods(), self.opts.namespace, self._extra_pods())
        self.targets = replace(
            self.targets,
            workload_namespaces=tuple(
                sorted({*self.targets.workload_namespaces, *self._tf_workload_namespaces()})
            ),
        )
        jobs: list[Job] = []
        for step in later:
            jobs.extend(self._jobs_for(step))
        self._total += len(jobs)
        self._run_jobs(jobs)
        self._write_objects()
        self._fit_budget()

    def _jobs_for(self, step: Step) -> list[Job]:
        if isinstance(step, ListStep):
            return self._list_jobs(step)
        if isinstance(step, LogStep):
            return self._log_jobs(step)
        if isinstance(step, GrepLogStep):
            return self._grep_jobs(step)
        if isinstance(step, DescribeStep):
            return self._describe_jobs(step)
        if isinstance(step, ExecStep):
            return self._exec_jobs(step)
        raise TypeError(f"no runner for {type(step).__name__}")

    def _run_jobs(self, jobs: list[Job]) -> None:
        with ThreadPoolExecutor(max_workers=self.opts.concurrency) as pool:
            for fut in [pool.submit(job) for job in jobs]:
                fut.result()

    def _expired(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def _preflight(self) -> None:
        try:
            self.server_version = self.kube.get_json("/version")
        except CallFailed as exc:
            if exc.http_status == 401:
                # It answered, and refused who we are: an expired or revoked token, a client
                # certificate it no longer trusts. A configuration problem, not an outage.
                raise ConfigError(
                    f"the API server at {self.kube.conn.server} refused the credentials of "
                    f"context {self.kube.conn.context or '(default)'} ({exc.message}): the token "
                    "may have expired; log in again or refresh the kubeconfig"
                ) from None
            raise UnreachableError(
                f"the API server at {self.kube.conn.server} did not answer: {exc.message}"
            ) from None
        try:
            self.kube.get_json(f"/apis/{TF_GROUP}")
            self.tf_installed = True
        except CallFailed as exc:
            self.tf_installed = False if exc.status == "not_found" else None

    # ------------------------------------------------------------------ bookkeeping
    def _attempt(self, art: dict[str, Any], label: str, work: Callable[[], None]) -> None:
        """Run one call, turning every failure into the artifact's status."""
        art.setdefault("paths", [])
        art.setdefault("scope", scope_of_id(art["step"]))
        t0 = time.monotonic()
        try:
            if self._expired():
                raise CallFailed("timeout", "the overall --timeout was reached before this call")
            work()
            art.setdefault("status", "ok")
        except CallFailed as exc:
            art.update(status=exc.status, message=exc.message)
        art["duration_ms"] = int((time.monotonic() - t0) * 1000)
        art.setdefault("message", "")
        self.artifacts.append(art)
        self._done += 1
        self.progress(label, self._done, self._total)

    def _keep(
        self, group: str, resource: str, namespace: str | None, item: dict[str, Any], res: Resource
    ) -> str:
        item.setdefault("apiVersion", f"{group}/{res.version}" if group else res.version)
        item.setdefault("kind", res.kind)
        meta = item.setdefault("metadata", {})
        key = (group, resource, namespace)
        uid = meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
        kept = strip(item)
        self.store.setdefault(key, {})[uid] = kept
        # The structural redaction pass runs here, in the worker thread while others wait on
        # the network, rather than for every object at the end of the run.
        self._structured[id(kept)] = (kept, self.writer.redactor.structure(kept))
        self.kinds[(group, resource)] = res
        return objects_member(resource, group, namespace)

    # ------------------------------------------------------------------ lists
    def _namespaces(self, spec: str | None) -> list[str | None]:
        if spec == TF_NAMESPACE:
            return [self.opts.namespace]
        if spec == ALL_NAMESPACES or spec is None:
            return [None]
        if spec == WORKLOAD_NAMESPACES:
            found = set(self.targets.workload_namespaces if self.targets else ())
            found |= set(self.opts.workload_namespaces)
            return sorted(found) or []
        return [spec]

    def _list_jobs(self, step: ListStep) -> list[Job]:
        jobs: list[Job] = []
        for res in step.resources:
            namespaces = self._namespaces(step.namespace) if res.namespaced else [None]
            for ns in namespaces:
                for lsel in step.label_selectors:
                    for fsel in step.field_selectors:
                        jobs.append(
                            lambda r=res, n=ns, ls=lsel, fs=fsel: self._list(step, r, n, ls, fs)
                        )
        return jobs

    def _list(
        self, step: ListStep, res: Resource, ns: str | None, lsel: str | None, fsel: str | None
    ) -> None:
        art: dict[str, Any] = {
            "id": _artifact_id("objects", res.display, ns or "", lsel or "", fsel or ""),
            "step": step.id,
            "type": "objects",
            "group": res.group,
            "version": res.version,
            "resource": res.resource,
            "kind": res.kind,
            "namespaced": res.namespaced,
            "namespace": ns,
            "label_selector": lsel,
            "field_selector": fsel,
        }
        self._list_calls[art["id"]] = (step, res, lsel, fsel)

        def work() -> None:
            if res.group == TF_GROUP and self.tf_installed is False:
                raise CallFailed(
                    "not_found",
                    f"the {TF_GROUP} API group is not served: TensorFusion CRDs are not installed",
                )
            listing = self.kube.list(res.path(ns), label_selector=lsel, field_selector=fsel)
            items = listing.get("items") or []
            keep = KEEP[step.keep] if step.keep else None
            kept = [i for i in items if keep is None or keep(i, self.opts.release)]
            paths = set()
            for item in kept:
                item_ns = (item.get("metadata") or {}).get("namespace") if res.namespaced else None
                paths.add(self._keep(res.group, res.resource, item_ns, item, res))
            if not kept:
                # An empty answer is data too: the file says "there were none".
                self.store.setdefault((res.group, res.resource, ns), {})
                self.kinds[(res.group, res.resource)] = res
                paths.add(objects_member(res.resource, res.group, ns))
            art.update(count=len(items), paths=sorted(paths))
            if keep is not None:
                art["kept"] = len(kept)

        self._attempt(art, f"{res.display} {ns or ''}".strip(), work)

    def _fallback_lists(self) -> None:
        """A namespace-scoped user cannot list cluster-wide: list where they may instead.

        Every namespaced list refused across all namespaces is retried in the TF namespace
        and the --workload-namespace ones (the refusal stays recorded, as it is true)."""
        namespaces = sorted({self.opts.namespace, *self.opts.workload_namespaces})
        done = {
            (a.get("group"), a.get("resource"), a.get("namespace"),
             a.get("label_selector"), a.get("field_selector"))
            for a in self.artifacts
        }  # fmt: skip
        jobs: list[Job] = []
        for art in self.artifacts:
            call = self._list_calls.get(art["id"])
            if call is None or art["status"] != "forbidden" or art.get("namespace") is not None:
                continue
            step, res, lsel, fsel = call
            if not res.namespaced:
                continue
            for ns in namespaces:
                if (res.group, res.resource, ns, lsel, fsel) not in done:
                    done.add((res.group, res.resource, ns, lsel, fsel))
                    jobs.append(
                        lambda s=step, r=res, n=ns, ls=lsel, fs=fsel: self._list(s, r, n, ls, fs)
                    )
        self._total += len(jobs)
        self._run_jobs(jobs)

    def _tf_workload_namespaces(self) -> set[str]:
        """Namespaces of the TF Deployments/StatefulSets found cluster-wide (phase one lists
        those kinds outside the TF namespace only through the tf-workloads filter)."""
        kinds = (("apps", "deployments"), ("apps", "statefulsets"))
        return {
            ns
            for (group, resource, ns), items in self.store.items()
            if (group, resource) in kinds and ns and ns != self.opts.namespace and items
        }

    def _extra_pods(self) -> list[PodRef]:
        extra = []
        for spec in self.opts.pods:
            ns, _, name = spec.partition("/")
            extra.append(PodRef(ns, name))
        return extra

    # ------------------------------------------------------------------ pods and logs
    def _pods(self, namespace: str | None = None) -> list[dict[str, Any]]:
        found = []
        for (group, resource, ns), items in self.store.items():
            if group == "" and resource == "pods" and (namespace is None or ns == namespace):
                found.extend(items.values())
        return sorted(found, key=lambda p: (p["metadata"].get("namespace"), p["metadata"]["name"]))

    def _pod(self, r: PodRef) -> dict[str, Any] | None:
        for pod in self.store.get(("", "pods", r.namespace), {}).values():
            if pod["metadata"].get("name") == r.name:
                return pod
        return None

    def _log_jobs(self, step: LogStep) -> list[Job]:
        jobs: list[Job] = []
        scope = None if step.namespace == ALL_NAMESPACES else self.opts.namespace
        for pod in self._pods(scope):
            if component(pod) not in step.components:
                continue
            if step.attention_only and not _needs_attention(pod):
                continue
            jobs.extend(self._container_log_jobs(step.id, pod, step.init_containers))
        return jobs

    def _container_log_jobs(
        self, step_id: str, pod: dict[str, Any], init: bool, only: Iterable[str] | None = None
    ) -> list[Job]:
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        restarts = {
            cs.get("name"): cs.get("restartCount", 0)
            for cs in (status.get("containerStatuses") or [])
            + (status.get("initContainerStatuses") or [])
        }
        groups = [(spec.get("containers") or [], False)]
        if init:
            groups.append((spec.get("initContainers") or [], True))
        wanted = set(only) if only is not None else None
        r = ref(pod)
        jobs: list[Job] = []
        for containers, is_init in groups:
            for container in containers:
                name = container.get("name", "")
                if wanted is not None and name not in wanted:
                    continue
                for prev in (False, True):
                    key = (r.namespace, r.name, name, prev)
                    # Several steps may want one log (a hypervisor stuck in Init is both a
                    # hypervisor and an unhealthy pod): read it once.
                    if (prev and restarts.get(name, 0) == 0) or key in self._logs_planned:
                        continue
                    self._logs_planned.add(key)
                    jobs.append(
                        lambda c=name, i=is_init, pv=prev: self._log(step_id, pod, c, i, pv)
                    )
        return jobs

    def _log(
        self, step_id: str, pod: dict[str, Any], container: str, init: bool, prev: bool
    ) -> None:
        r = ref(pod)
        art: dict[str, Any] = {
            "id": _artifact_id(
                "log", r.namespace, r.name, container, "previous" if prev else "current"
            ),
            "step": step_id,
            "type": "log",
            "namespace": r.namespace,
            "pod": r.name,
            "container": container,
            "init_container": init,
            "previous": prev,
        }

        def work() -> None:
            self._require_log_access(r.namespace)
            text = self.kube.log(
                r.namespace,
                r.name,
                container,
                previous=prev,
                tail=self.opts.tail,
                since_seconds=self.opts.since_seconds,
            )
            lines = _count_lines(text)
            member = log_member(r.namespace, r.name, container, prev)
            self.writer.put(member, text.encode())
            art.update(paths=[member], lines=lines)
            # The API sends at most --tail lines; a full page means older lines were left.
            if lines >= self.opts.tail:
                art.update(status="truncated", message=f"newest {self.opts.tail} lines kept")

        self._attempt(art, f"logs {r}/{container}{' (previous)' if prev else ''}", work)

    def _require_log_access(self, namespace: str) -> None:
        if self.kube.can("get", "pods", namespace=namespace, subresource="log") is False:
            raise CallFailed("forbidden", f'RBAC does not allow "get pods/log" in {namespace}')

    def _grep_jobs(self, step: GrepLogStep) -> list[Job]:
        jobs: list[Job] = []
        for pod in self._pods(self.opts.namespace):
            if component(pod) != step.component:
                continue
            names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
            for container in [c for c in step.containers if c in names][:1]:
                jobs.append(lambda p=pod, c=container: self._grep(step, p, c))
        return jobs

    def _grep(self, step: GrepLogStep, pod: dict[str, Any], container: str) -> None:
        r = ref(pod)
        label = re.sub(r"[^a-z0-9]+", "-", step.pattern.lower()).strip("-")
        art: dict[str, Any] = {
            "id": _artifact_id("log", r.namespace, r.name, container, f"grep-{label}"),
            "step": step.id,
            "type": "log",
            "namespace": r.namespace,
            "pod": r.name,
            "container": container,
            "previous": False,
            "grep": step.pattern,
        }

        def work() -> None:
            self._require_log_access(r.namespace)
            text = self.kube.log(
                r.namespace,
                r.name,
                container,
                previous=False,
                tail=None,
                limit_bytes=GREP_LIMIT_BYTES,
            )
            hits = [line for line in text.splitlines() if step.pattern in line]
            kept = hits[-step.max_lines :]
            member = grep_member(r.namespace, r.name, container, f"grep-{label}")
            self.writer.put(member, ("\n".join(kept) + ("\n" if kept else "")).encode())
            art.update(paths=[member], lines=len(kept))
            if len(hits) > len(kept) or len(text.encode()) >= GREP_LIMIT_BYTES:
                art.update(status="truncated", message=f"newest {len(kept)} matching lines kept")

        self._attempt(art, f'grep "{step.pattern}" {r}', work)

    # ------------------------------------------------------------------ describe
    def _describe_jobs(self, step: DescribeStep) -> list[Job]:
        assert self.targets is not None
        jobs: list[Job] = []
        per_ns: dict[str, list[PodRef]] = {}
        for r in self.targets.unhealthy:
            if r.namespace != self.opts.namespace:  # TF namespace events are all collected
                per_ns.setdefault(r.namespace, []).append(r)
        for ns, pods in sorted(per_ns.items()):
            if len(pods) > EVENTS_PER_POD_LIMIT:
                jobs.append(lambda n=ns: self._events(step, n, None))
            else:
                jobs.extend(lambda p=p: self._events(step, p.namespace, p.name) for p in pods)
        for r, containers in sorted(self.targets.init_stuck.items(), key=lambda kv: str(kv[0])):
            pod = self._pod(r)
            if pod is not None:
                jobs.extend(self._container_log_jobs(step.id, pod, True, only=containers))
        return jobs

    def _events(self, step: DescribeStep, ns: str, pod: str | None) -> None:
        selector = f"involvedObject.kind=Pod,involvedObject.name={pod}" if pod else None
        art: dict[str, Any] = {
            "id": _artifact_id("objects", "events", ns, pod or ""),
            "step": step.id,
            "type": "objects",
            "group": "",
            "version": "v1",
            "resource": "events",
            "kind": "Event",
            "namespaced": True,
            "namespace": ns,
            "field_selector": selector,
        }

        def work() -> None:
            listing = self.kube.list(EVENTS.path(ns), field_selector=selector)
            items = listing.get("items") or []
            for item in items:
                self._keep("", "events", ns, item, EVENTS)
            self.store.setdefault(("", "events", ns), {})
            self.kinds[("", "events")] = EVENTS
            art.update(count=len(items), paths=[objects_member("events", "", ns)])

        self._attempt(art, f"events of {ns}/{pod or '*'}", work)

    # ------------------------------------------------------------------ helm
    def _helm(self, step: HelmStep) -> None:
        art: dict[str, Any] = {"id": f"helm:{self.opts.release}", "step": step.id, "type": "helm"}
        selector = RELEASE_SELECTOR.format(release=self.opts.release)
        ns = self.opts.namespace

        def work() -> None:
            records, from_secret = [], True
            try:
                # Read in memory only; the Secret itself never reaches the writer.
                records = (
                    self.kube.list(f"/api/v1/namespaces/{ns}/secrets", label_selector=selector).get(
                        "items"
                    )
                    or []
                )
            except CallFailed as exc:
                if exc.status != "forbidden":
                    raise
            if not records:  # HELM_DRIVER=configmap keeps releases in ConfigMaps
                records = (
                    self.kube.list(CONFIGMAPS.path(ns), label_selector=selector).get("items") or []
                )
                from_secret = False
            record = latest_record(records)
            if record is None:
                raise CallFailed(
                    "not_found",
                    f"no Helm release {self.opts.release!r} in {ns} "
                    "(installed another way, or another release name?)",
                )
            try:
                projected = project_record(record, from_secret=from_secret)
            except ReleaseDecodeError as exc:
                raise CallFailed("error", str(exc)) from None
            member = helm_member(self.opts.release)
            self.writer.put_object(member, projected)
            art.update(paths=[member])

        self._attempt(art, f"helm release {self.opts.release}", work)

    # ------------------------------------------------------------------ metrics
    def _metrics(self, step: MetricsStep) -> None:
        art: dict[str, Any] = {
            "id": "metrics:tf_system_metrics",
            "step": step.id,
            "type": "metrics",
        }
        path = (
            f"/api/v1/namespaces/{self.opts.greptime_namespace}/services/"
            f"{self.opts.greptime_service}/proxy/v1/sql"
        )

        def work() -> None:
            try:
                raw = self.kube.get_json(path, [("db", "public"), ("sql", METRICS_SQL)])
            except CallFailed as exc:
                if exc.status in ("not_found", "error") and exc.http_status in (404, 502, 503):
                    raise CallFailed(
                        "skipped",
                        f"GreptimeDB is not reachable through the API server ({exc.message})",
                    ) from None
                raise
            member = metrics_member("tf_system_metrics")
            self.writer.put_object(member, raw)
            art.update(paths=[member])

        self._attempt(art, "allocation failures (GreptimeDB)", work)

    # ------------------------------------------------------------------ exec
    def _exec_jobs(self, step: ExecStep) -> list[Job]:
        from .execs import CONTAINER_CHECKS, NODE_CHECKS

        assert self.targets is not None
        jobs: list[Job] = []
        if step.target == "nodes":
            for pod in self._pods(self.opts.namespace):
                if component(pod) == "hypervisor" and _running(pod):
                    container = _main_container(pod)
                    jobs.extend(
                        lambda p=pod, c=container, k=check: self._exec(step, p, c, k)
                        for check in NODE_CHECKS
                    )
            return jobs
        chosen = [self._pod(r) for r in self._extra_pods()]
        for r in self.targets.tf_pods:
            pod = self._pod(r)
            # Every TF workload pod outside the TF namespace (injected or not: a pod the
            # webhook skipped is exactly one whose limits are not enforced).
            if pod is not None and r.namespace != self.opts.namespace and _running(pod):
                chosen.append(pod)
        seen: set[PodRef] = set()
        for pod in chosen:
            if pod is None or ref(pod) in seen or len(seen) >= self.opts.exec_limit:
                continue
            seen.add(ref(pod))
            container = _main_container(pod)
            jobs.extend(
                lambda p=pod, c=container, k=check: self._exec(step, p, c, k)
                for check in CONTAINER_CHECKS
            )
        return jobs

    def _exec(self, step: ExecStep, pod: dict[str, Any], container: str, check: Any) -> None:
        from .execs import run_exec

        r = ref(pod)
        name = check.id.rsplit("/", 1)[-1]
        art: dict[str, Any] = {
            "id": _artifact_id("exec", r.namespace, r.name, container, check.id),
            "step": step.id,
            "type": "exec",
            "namespace": r.namespace,
            "pod": r.name,
            "container": container,
            "check": check.id,
            "argv": list(check.argv),
        }

        def work() -> None:
            result = run_exec(
                self.kube.conn.api_client,
                r.namespace,
                r.name,
                container,
                list(check.argv),
                timeout=self.opts.request_timeout,
            )
            art["exit_code"] = result.exit_code
            if result.status in ("ok", "truncated"):
                member = exec_member(r.namespace, r.name, container, name)
                body = result.stdout + (
                    f"\n--- stderr ---\n{result.stderr}" if result.stderr else ""
                )
                self.writer.put(member, body.encode())
                art["paths"] = [member]
            if result.status != "ok":
                art.update(status=result.status, message=result.message)

        self._attempt(art, f"exec {check.id} in {r}/{container}", work)

    # ------------------------------------------------------------------ output
    def _write_objects(self) -> None:
        for (group, resource, ns), items in sorted(
            self.store.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")
        ):
            res = self.kinds.get((group, resource))
            ordered = sorted(
                items.values(),
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")),
            )
            head = {
                "apiVersion": f"{group}/{res.version}" if group and res else "v1",
                "kind": f"{res.kind if res else ''}List",
                "metadata": {},
            }
            self.writer.put_listing(
                objects_member(resource, group, ns), head, [self._structure(o) for o in ordered]
            )

    def _structure(self, obj: dict[str, Any]) -> Structure:
        known = self._structured.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        return self.writer.redactor.structure(obj)

    def _fit_budget(self) -> None:
        """Over --max-size, leave out the oldest lines of the largest logs (see budget.py)."""
        max_size = self.opts.max_size
        staged = self.writer.staged()
        if max_size is None or sum(staged.values()) <= max_size * (1 - HEADROOM):
            return  # even uncompressed it fits
        logs = {
            a["paths"][0]: a
            for a in self.artifacts
            if a["type"] == "log" and len(a.get("paths") or ()) == 1 and a["paths"][0] in staged
        }
        fixed = sum(estimate(self.writer.read_staged(m)) for m in staged if m not in logs)
        sizes = {m: LogSize(staged[m], estimate(self.writer.read_staged(m))) for m in logs}
        for member, max_bytes in sorted(plan_trim(fixed, sizes, max_size).items()):
            dropped = self.writer.trim_to_newest(member, max_bytes)
            if not dropped:
                continue
            art = logs[member]
            art["lines"] = max(0, art.get("lines", 0) - dropped)
            art["trimmed_lines"] = dropped
            note = f"oldest {dropped} lines left out to fit --max-size {max_size} bytes"
            art["message"] = f"{art['message']}; {note}" if art.get("message") else note
            if art["status"] == "ok":
                art["status"] = "truncated"

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
                "overall_timeout_seconds": opts.overall_timeout,
                "exec": opts.exec,
                "metrics": opts.metrics,
                "pods": list(opts.pods),
                "workload_namespaces": list(opts.workload_namespaces),
                "max_size_bytes": opts.max_size,
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
            "redaction": {"enabled": True, "counts": {}, "files": {}},  # the writer fills it
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


def scope_of_id(step_id: str) -> str:
    return step_id.split("/", 1)[0]


def _artifact_id(*parts: str) -> str:
    return ":".join(p for p in parts if p) or "artifact"


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def _main_container(pod: dict[str, Any]) -> str:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    wanted = annotations.get("tensor-fusion.ai/inject-container", "").split(",")[0].strip()
    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    return wanted if wanted in names else (names[0] if names else "")


def _needs_attention(pod: dict[str, Any]) -> bool:
    """Unhealthy or restarted pods, and remote workers (their logs explain client errors)."""
    if unhealthy_reason(pod):
        return True
    status = pod.get("status") or {}
    if any(cs.get("restartCount", 0) > 0 for cs in status.get("containerStatuses") or []):
        return True
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return component(pod) == "worker" and annotations.get("tensor-fusion.ai/is-local-gpu") != "true"
