"""List steps: the manual's `kubectl get`, one call per resource, namespace and selector.

Every object listed goes to the run's object store; a client-side filter (`ListStep.keep`)
may keep only some. Each call is remembered, so that a list refused cluster-wide can be
retried namespace by namespace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from k8s.tensorfusion import TF_GROUP
from k8s.types import ResourceType

from .filters import KEEP
from .kube import CallFailed, Kube
from .ledger import Job, Ledger, artifact_id
from .plan import ALL_NAMESPACES, TF_NAMESPACE, WORKLOAD_NAMESPACES, ListStep
from .store import ObjectStore

ListCall = tuple[ListStep, ResourceType, str | None, str | None]  # step, resource, selectors


@dataclass
class Lists:
    kube: Kube
    ledger: Ledger
    store: ObjectStore
    namespace: str  # the TensorFusion namespace
    release: str
    workload_namespaces: tuple[str, ...]  # given with --workload-namespace
    tf_installed: bool | None  # None: unknown
    calls: dict[str, ListCall] = field(default_factory=dict)  # artifact id -> its call

    def jobs(self, step: ListStep, found_workload_namespaces: Iterable[str] = ()) -> list[Job]:
        """One job per resource, namespace and selector; `found_workload_namespaces` are
        those the first phase found TF workloads in."""
        jobs: list[Job] = []
        for res in step.resources:
            namespaces = (
                self._namespaces(step.namespace, found_workload_namespaces)
                if res.namespaced
                else [None]
            )
            for ns in namespaces:
                for lsel in step.label_selectors:
                    for fsel in step.field_selectors:
                        jobs.append(
                            lambda r=res, n=ns, ls=lsel, fs=fsel: self._list(step, r, n, ls, fs)
                        )
        return jobs

    def fallback_jobs(self) -> list[Job]:
        """A namespace-scoped user cannot list cluster-wide: list where they may instead.

        Every namespaced list refused across all namespaces is retried in the TF namespace
        and the --workload-namespace ones (the refusal stays recorded, as it is true)."""
        namespaces = sorted({self.namespace, *self.workload_namespaces})
        done = {
            (a.get("group"), a.get("resource"), a.get("namespace"),
             a.get("label_selector"), a.get("field_selector"))
            for a in self.ledger.artifacts
        }  # fmt: skip
        jobs: list[Job] = []
        for art in self.ledger.artifacts:
            call = self.calls.get(art["id"])
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
        return jobs

    def _namespaces(self, spec: str | None, found: Iterable[str]) -> list[str | None]:
        if spec == TF_NAMESPACE:
            return [self.namespace]
        if spec == ALL_NAMESPACES or spec is None:
            return [None]
        if spec == WORKLOAD_NAMESPACES:
            return sorted({*found, *self.workload_namespaces})
        return [spec]

    def _list(
        self, step: ListStep, res: ResourceType, ns: str | None, lsel: str | None, fsel: str | None
    ) -> None:
        art: dict[str, Any] = {
            "id": artifact_id("objects", res.display, ns or "", lsel or "", fsel or ""),
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
        self.calls[art["id"]] = (step, res, lsel, fsel)

        def work() -> None:
            if res.group == TF_GROUP and self.tf_installed is False:
                raise CallFailed(
                    "not_found",
                    f"the {TF_GROUP} API group is not served: TensorFusion CRDs are not installed",
                )
            listing = self.kube.list(res.path(ns), label_selector=lsel, field_selector=fsel)
            items = listing.get("items") or []
            keep = KEEP[step.keep] if step.keep else None
            kept = [i for i in items if keep is None or keep(i, self.release)]
            paths = set()
            for item in kept:
                item_ns = (item.get("metadata") or {}).get("namespace") if res.namespaced else None
                paths.add(self.store.keep(res, item_ns, item))
            if not kept:
                paths.add(self.store.touch(res, ns))
            art.update(count=len(items), paths=sorted(paths))
            if keep is not None:
                art["kept"] = len(kept)

        self.ledger.attempt(art, f"{res.display} {ns or ''}".strip(), work)
