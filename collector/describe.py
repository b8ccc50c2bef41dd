"""The describe step: what `kubectl describe pod` adds for the unhealthy pods found.

Their events (the TF namespace's events are all listed anyway), and the logs of the init
containers of pods stuck in Init. Events go to the object store like any listed object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kube import Kube
from .ledger import Job, Ledger, artifact_id
from .logs import Logs
from .plan import EVENTS, DescribeStep
from .store import ObjectStore
from .targets import PodRef, Targets

EVENTS_PER_POD_LIMIT = 10  # above this many unhealthy pods in a namespace, list its events once


@dataclass
class Describe:
    kube: Kube
    ledger: Ledger
    store: ObjectStore
    logs: Logs
    namespace: str  # the TensorFusion namespace

    def jobs(self, step: DescribeStep, targets: Targets) -> list[Job]:
        jobs: list[Job] = []
        per_ns: dict[str, list[PodRef]] = {}
        for r in targets.unhealthy:
            if r.namespace != self.namespace:  # TF namespace events are all collected
                per_ns.setdefault(r.namespace, []).append(r)
        for ns, pods in sorted(per_ns.items()):
            if len(pods) > EVENTS_PER_POD_LIMIT:
                jobs.append(lambda n=ns: self._events(step, n, None))
            else:
                jobs.extend(lambda p=p: self._events(step, p.namespace, p.name) for p in pods)
        for r, containers in sorted(targets.init_stuck.items(), key=lambda kv: str(kv[0])):
            pod = self.store.pod(r)
            if pod is not None:
                jobs.extend(self.logs.container_jobs(step.id, pod, True, only=containers))
        return jobs

    def _events(self, step: DescribeStep, ns: str, pod: str | None) -> None:
        selector = f"involvedObject.kind=Pod,involvedObject.name={pod}" if pod else None
        art: dict[str, Any] = {
            "id": artifact_id("objects", "events", ns, pod or ""),
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
                self.store.keep(EVENTS, ns, item)
            member = self.store.touch(EVENTS, ns)
            art.update(count=len(items), paths=[member])

        self.ledger.attempt(art, f"events of {ns}/{pod or '*'}", work)
