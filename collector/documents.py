"""Steps that read one document each: the Helm release, and allocation metrics.

The Helm release record is read in memory only and leaves as its redacted projection
(collector.helm); the metrics are one SQL query to GreptimeDB through the API server's
service proxy (opt-in with --metrics).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s.helm_record import ReleaseDecodeError, latest_record

from .bundle import BundleWriter, helm_member, metrics_member
from .helm import RELEASE_SELECTOR, project_record
from .kube import CallFailed, Kube
from .ledger import Ledger
from .plan import CONFIGMAPS, HelmStep, MetricsStep

METRICS_SQL = (
    "SELECT pool, MAX(total_allocation_fail_cnt) - MIN(total_allocation_fail_cnt) AS failures, "
    "MAX(total_allocation_success_cnt) - MIN(total_allocation_success_cnt) AS successes "
    "FROM tf_system_metrics WHERE ts > now() - INTERVAL '1 hour' GROUP BY pool ORDER BY pool"
)


@dataclass
class Documents:
    kube: Kube
    ledger: Ledger
    writer: BundleWriter
    namespace: str  # the TensorFusion namespace, where its Helm release is
    release: str
    greptime_namespace: str
    greptime_service: str  # "name:port"

    def read_release(self, step: HelmStep) -> None:
        art: dict[str, Any] = {"id": f"helm:{self.release}", "step": step.id, "type": "helm"}
        selector = RELEASE_SELECTOR.format(release=self.release)
        ns = self.namespace

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
                    f"no Helm release {self.release!r} in {ns} "
                    "(installed another way, or another release name?)",
                )
            try:
                projected = project_record(record, from_secret=from_secret)
            except ReleaseDecodeError as exc:
                raise CallFailed("error", str(exc)) from None
            member = helm_member(self.release)
            self.writer.put_object(member, projected)
            art.update(paths=[member])

        self.ledger.attempt(art, f"helm release {self.release}", work)

    def read_metrics(self, step: MetricsStep) -> None:
        art: dict[str, Any] = {
            "id": "metrics:tf_system_metrics",
            "step": step.id,
            "type": "metrics",
        }
        path = (
            f"/api/v1/namespaces/{self.greptime_namespace}/services/"
            f"{self.greptime_service}/proxy/v1/sql"
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

        self.ledger.attempt(art, "allocation failures (GreptimeDB)", work)
