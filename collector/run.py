"""The collection core: options in, bundle and result out. Never prints.

Two phases: first the lists (what the manual's `kubectl get` commands show), then what
depends on them (logs, events of unhealthy pods, owners, in-container checks), with the
targets found from the first phase. Every call ends as an artifact with a status.

Each step kind has its own module (lists, logs, describe, documents, exec_step); they share
the run's ledger of artifacts (ledger.py) and its object store (store.py).
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
from functools import partial
from pathlib import Path
from typing import Any

import outputs
from k8s.tensorfusion import TF_GROUP

from .budget import DEFAULT_MAX_SIZE, fit
from .bundle import BundleWriter
from .describe import Describe
from .diagnosis import client_certificate_expired
from .documents import Documents
from .errors import ConfigError, UnreachableError
from .exec_step import ExecChecks
from .kube import CallFailed, Kube
from .kubeconfig import connect
from .ledger import Job, Ledger, ProgressFn
from .lists import Lists
from .locate import Installation, locate
from .logs import Logs
from .manifest import build_manifest
from .plan import (
    WORKLOAD_NAMESPACES,
    DescribeStep,
    ExecStep,
    GrepLogStep,
    HeadLogStep,
    HelmStep,
    ListStep,
    LogStep,
    MetricsStep,
    Step,
    default_plan,
)
from .redact import Redactor, key_from_env
from .redact.mapfile import check_map_path, write_map
from .store import ObjectStore
from .targets import Targets, find_targets, parse_refs


@dataclass(frozen=True)
class CollectOptions:
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None  # None: found by collector.locate
    release: str | None = None
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
    force: bool = False  # an existing regular file at the output (or map) path may be replaced
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
    installation: Installation | None = None
    warnings: list[str] = field(default_factory=list)  # the manifest's: the run exits 3

    def by_status(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for art in self.artifacts:
            counts[art["status"]] = counts.get(art["status"], 0) + 1
        return counts

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [a for a in self.artifacts if a["status"] in ("forbidden", "timeout", "error")]


def default_output(context: str | None, now: datetime) -> Path:
    """A new name in the current directory: tf-support-<context>-<UTC time>.tar.zst."""
    ctx = re.sub(r"[^A-Za-z0-9._-]", "_", context or "cluster")
    return outputs.unique(
        Path("."), f"tf-support-{ctx}-{now.strftime('%Y%m%dT%H%M%SZ')}", ".tar.zst"
    )


def now_utc() -> datetime:
    # SOURCE_DATE_EPOCH makes regenerated sample bundles reproducible.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), timezone.utc)
    return datetime.now(timezone.utc).replace(microsecond=0)


def collect(
    opts: CollectOptions,
    progress: ProgressFn | None = None,
    located: Callable[[Installation], None] | None = None,
) -> CollectResult:
    """Collect a bundle; `located` hears where TensorFusion was found before collection
    starts, `progress` each call that ends."""
    conn = connect(opts.kubeconfig, opts.context)
    kube = Kube(conn, qps=opts.qps, timeout=opts.request_timeout)
    started = time.monotonic()
    created = now_utc()
    out = opts.output or default_output(conn.context, created)
    check_map_path(opts.redaction_map, out, replace=opts.force)
    # One redactor per run: its key exists only in this process, never in the bundle.
    redactor = Redactor(key=key_from_env(), public_ips=opts.redact_public_ips)
    writer = BundleWriter(out, redactor=redactor, replace=opts.force)
    try:
        deadline = started + opts.overall_timeout if opts.overall_timeout else None
        ledger = Ledger(progress or (lambda *_: None), deadline=deadline)
        server_version, tf_installed = preflight(kube)
        installation = locate(kube, opts.namespace, opts.release)
        if located is not None:
            located(installation)
        resolved = replace(opts, namespace=installation.namespace, release=installation.release)
        run = _Run(kube, resolved, writer, ledger, tf_installed)
        run.execute(default_plan(with_exec=opts.exec, with_metrics=opts.metrics))
        manifest = build_manifest(
            opts,
            created=created,
            context=conn.context,
            elapsed=time.monotonic() - started,
            artifacts=ledger.artifacts,
            server_version=server_version,
            tf_installed=tf_installed,
            installation=installation,
            warnings=[*installation.warnings, *run.warnings],
            store=run.store,
        )
        path = writer.finish(manifest)
    except KeyboardInterrupt:
        kube.stop()
        if not writer.committed:
            writer.abort()
            raise
        # The signal came as the bundle went into place: it is complete, so it stands.
        path = writer.final_path
    except BaseException:
        kube.stop()
        writer.abort()
        raise
    ignore_interrupts()
    if opts.redaction_map is not None:
        write_map(opts.redaction_map, redactor, path, replace=opts.force)
    return CollectResult(
        path=path,
        size=path.stat().st_size,
        artifacts=manifest["artifacts"],
        duration_s=time.monotonic() - started,
        requests=kube.requests,
        redaction=redactor.summary(),
        max_size=opts.max_size,
        installation=installation,
        warnings=manifest["warnings"],
    )


def ignore_interrupts() -> None:
    """Once the bundle exists, Ctrl-C/SIGTERM cannot take it back: what is left (the map,
    the summary, exiting) runs to its end, and the exit code tells the truth."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)


def preflight(kube: Kube) -> tuple[dict[str, Any], bool | None]:
    """The server's /version, and whether the TensorFusion API group is served (None:
    unknown). Raises when the API server does not answer or refuses our credentials."""
    try:
        server_version = kube.get_json("/version")
    except CallFailed as exc:
        if exc.diagnosis is not None:  # TLS or a proxy: the cause and the way out
            raise exc.diagnosis.exception() from None
        if exc.http_status == 401:
            raise _refused(kube, exc.message) from None
        raise UnreachableError(
            f"the API server at {kube.conn.server} did not answer: {exc.message}"
        ) from None
    try:
        kube.get_json(f"/apis/{TF_GROUP}")
        tf_installed: bool | None = True
    except CallFailed as exc:
        tf_installed = False if exc.status == "not_found" else None
    return server_version, tf_installed


def _refused(kube: Kube, answer: str) -> ConfigError:
    """A 401: the server answered, and refused who we are (an expired or revoked token, a
    client certificate it no longer trusts). A configuration problem, not an outage."""
    expired = client_certificate_expired(kube.conn.route)
    if expired:
        why = f"its client certificate expired on {expired}"
        fix = "get a new client certificate (or kubeconfig) for this cluster"
    else:
        why, fix = "the token may have expired", "log in again or refresh the kubeconfig"
    return ConfigError(
        f"the API server at {kube.conn.server} refused the credentials of context "
        f"{kube.conn.context or '(default)'} ({answer}): {why}; {fix}"
    )


class _Run:
    """One run of the plan: a runner per step kind over one ledger and one object store."""

    def __init__(
        self,
        kube: Kube,
        opts: CollectOptions,
        writer: BundleWriter,
        ledger: Ledger,
        tf_installed: bool | None,
    ) -> None:
        self.opts = opts
        self.kube = kube
        self.writer = writer
        self.ledger = ledger
        self.store = ObjectStore(writer.redactor)
        self.extra = tuple(parse_refs(opts.pods))
        self.warnings: list[str] = []
        ns = opts.namespace
        self.lists = Lists(
            kube,
            ledger,
            self.store,
            namespace=ns,
            release=opts.release,
            workload_namespaces=opts.workload_namespaces,
            tf_installed=tf_installed,
        )
        self.logs = Logs(
            kube,
            ledger,
            writer,
            self.store,
            namespace=ns,
            tail=opts.tail,
            since_seconds=opts.since_seconds,
        )
        self.describe = Describe(kube, ledger, self.store, self.logs, namespace=ns)
        self.execs = ExecChecks(
            kube,
            ledger,
            writer,
            self.store,
            namespace=ns,
            limit=opts.exec_limit,
            timeout=opts.request_timeout,
            extra=self.extra,
        )
        self.documents = Documents(
            kube,
            ledger,
            writer,
            namespace=ns,
            release=opts.release,
            greptime_namespace=opts.greptime_namespace,
            greptime_service=opts.greptime_service,
        )

    def execute(self, plan: Iterable[Step]) -> None:
        """Phase one (lists, Helm, metrics), then lists refused cluster-wide again namespace
        by namespace, then the targets found and phase two; the objects are written last,
        and the logs trimmed to the size budget."""
        first: list[Job] = []
        later: list[Step] = []
        for step in plan:
            if isinstance(step, ListStep) and step.namespace != WORKLOAD_NAMESPACES:
                first.extend(self.lists.jobs(step))
            elif isinstance(step, HelmStep):
                first.append(partial(self.documents.read_release, step))
            elif isinstance(step, MetricsStep):
                first.append(partial(self.documents.read_metrics, step))
            else:
                later.append(step)
        self._run_jobs(first)
        self._run_jobs(self.lists.fallback_jobs())
        found = find_targets(self.store.pods(), self.opts.namespace, self.extra)
        self.warnings.extend(
            f"pod {r} was not found (--pod)" for r in self.extra if self.store.pod(r) is None
        )
        targets = replace(
            found,
            workload_namespaces=tuple(
                sorted({*found.workload_namespaces, *self._tf_workload_namespaces()})
            ),
        )
        jobs: list[Job] = []
        for step in later:
            jobs.extend(self._jobs_for(step, targets))
        self._run_jobs(jobs)
        self.store.write(self.writer)
        fit(self.writer, self.ledger.artifacts, self.opts.max_size)

    def _jobs_for(self, step: Step, targets: Targets) -> list[Job]:
        if isinstance(step, ListStep):
            return self.lists.jobs(step, targets.workload_namespaces)
        if isinstance(step, LogStep):
            return self.logs.jobs(step)
        if isinstance(step, GrepLogStep):
            return self.logs.grep_jobs(step)
        if isinstance(step, HeadLogStep):
            return self.logs.head_jobs(step)
        if isinstance(step, DescribeStep):
            return self.describe.jobs(step, targets)
        if isinstance(step, ExecStep):
            return self.execs.jobs(step, targets)
        raise TypeError(f"no runner for {type(step).__name__}")

    def _run_jobs(self, jobs: list[Job]) -> None:
        self.ledger.total += len(jobs)
        pool = ThreadPoolExecutor(max_workers=self.opts.concurrency)
        try:
            for fut in [pool.submit(job) for job in jobs]:
                fut.result()
        except BaseException:
            # Ctrl-C, or a job that broke: queued jobs never start, waiting ones end now, and
            # a request in flight is not waited for (the caller removes what was staged).
            self.kube.stop()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()

    def _tf_workload_namespaces(self) -> set[str]:
        """Namespaces of the TF Deployments/StatefulSets/DaemonSets found cluster-wide (phase
        one lists those kinds outside the TF namespace only through the tf-workloads filter)."""
        kinds = (("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"))
        return {
            ns
            for (group, resource, ns), items in self.store.objects.items()
            if (group, resource) in kinds and ns and ns != self.opts.namespace and items
        }
