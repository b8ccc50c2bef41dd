"""Log steps: container logs of TF component pods, and filtered reads of whole logs.

A container log is read like `kubectl logs --tail`: the newest `--tail` lines, and the
previous container's log too where the container restarted (a crash's reason is in the log
of the run that died). A grep read takes a component's whole current log and keeps only the
lines with a fixed string, the newest `GrepLogStep.max_lines` of them. A head read keeps the
first lines since the container started (`limitBytes` with no tail: the API answers from the
start), where TensorFusion's processes print their version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .bundle import BundleWriter, grep_member, log_member
from .kube import CallFailed, Kube
from .ledger import Job, Ledger, artifact_id
from .plan import ALL_NAMESPACES, GrepLogStep, HeadLogStep, LogStep
from .store import ObjectStore
from .targets import SELECTIONS, component, failed_and_restarted, needs_attention, ref

GREP_LIMIT_BYTES = 32 * 1024 * 1024  # the most of one log read to grep through
HEAD_LIMIT_BYTES = 64 * 1024  # a head read's first lines fit well within this


@dataclass
class Logs:
    kube: Kube
    ledger: Ledger
    writer: BundleWriter
    store: ObjectStore
    namespace: str  # the TensorFusion namespace
    tail: int
    since_seconds: int | None
    # (namespace, pod, container, previous) of every log read planned so far
    _planned: set[tuple[str, str, str, bool]] = field(default_factory=set)

    def jobs(self, step: LogStep) -> list[Job]:
        scope = None if step.namespace == ALL_NAMESPACES else self.namespace
        picked = SELECTIONS[step.select] if step.select else None
        pods = [
            pod
            for pod in self.store.pods(scope)
            if (picked(pod, self.namespace) if picked else component(pod) in step.components)
            and (not step.attention_only or needs_attention(pod))
        ]
        if step.max_pods is not None:
            # Every pod whose container failed and restarted (the previous log holds why), then
            # the others that need attention first, up to max_pods in all; sorted() keeps
            # namespace/name order within each group.
            failed = [p for p in pods if failed_and_restarted(p)]
            rest = sorted(
                (p for p in pods if not failed_and_restarted(p)),
                key=lambda p: not needs_attention(p),
            )
            pods = failed + rest[: max(step.max_pods - len(failed), 0)]
        tail = min(self.tail, step.tail) if step.tail else self.tail
        jobs: list[Job] = []
        for pod in pods:
            jobs.extend(self.container_jobs(step.id, pod, step.init_containers, tail=tail))
        return jobs

    def container_jobs(
        self,
        step_id: str,
        pod: dict[str, Any],
        init: bool,
        only: Iterable[str] | None = None,
        tail: int | None = None,
    ) -> list[Job]:
        """A read of each container's log (init containers' too with `init`, only the
        containers named in `only` if given), and of its previous log where it restarted."""
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
                    if (prev and restarts.get(name, 0) == 0) or key in self._planned:
                        continue
                    self._planned.add(key)
                    jobs.append(
                        lambda c=name, i=is_init, pv=prev: self._log(
                            step_id, pod, c, i, pv, tail or self.tail
                        )
                    )
        return jobs

    def grep_jobs(self, step: GrepLogStep) -> list[Job]:
        jobs: list[Job] = []
        for pod in self.store.pods(self.namespace):
            if component(pod) != step.component:
                continue
            names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
            for container in [c for c in step.containers if c in names][:1]:
                jobs.append(lambda p=pod, c=container: self._grep(step, p, c))
        return jobs

    def head_jobs(self, step: HeadLogStep) -> list[Job]:
        """A head read of each component container, in one pod per distinct image (the spec's
        and the one the node resolved): pods of one image print the same version."""
        jobs: list[Job] = []
        seen: set[tuple[str, str, str]] = set()
        for pod in self.store.pods(self.namespace):
            if component(pod) not in step.components:
                continue
            images = {
                s.get("name"): s.get("imageID", "")
                for s in (pod.get("status") or {}).get("containerStatuses") or []
            }
            for container in (pod.get("spec") or {}).get("containers") or []:
                name = container.get("name", "")
                key = (name, container.get("image", ""), images.get(name, ""))
                if key in seen:
                    continue
                seen.add(key)
                jobs.append(lambda p=pod, c=name: self._head(step, p, c))
        return jobs

    def _head(self, step: HeadLogStep, pod: dict[str, Any], container: str) -> None:
        def first(text: str) -> tuple[list[str], str]:
            return text.splitlines()[: step.lines], ""

        self._from_start(
            step.id, pod, container, "head", {"head": True}, HEAD_LIMIT_BYTES, first,
            f"first lines of {ref(pod)}/{container}",
        )  # fmt: skip

    def _log(
        self, step_id: str, pod: dict[str, Any], container: str, init: bool, prev: bool, tail: int
    ) -> None:
        r = ref(pod)
        art: dict[str, Any] = {
            "id": artifact_id(
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
            self._require_access(r.namespace)
            text = self.kube.log(
                r.namespace,
                r.name,
                container,
                previous=prev,
                tail=tail,
                since_seconds=self.since_seconds,
            )
            lines = _count_lines(text)
            member = log_member(r.namespace, r.name, container, prev)
            self.writer.put(member, text.encode())
            art.update(paths=[member], lines=lines)
            # The API sends at most `tail` lines; a full page means older lines were left.
            if lines >= tail:
                art.update(status="truncated", message=f"newest {tail} lines kept")

        self.ledger.attempt(art, f"logs {r}/{container}{' (previous)' if prev else ''}", work)

    def _grep(self, step: GrepLogStep, pod: dict[str, Any], container: str) -> None:
        label = re.sub(r"[^a-z0-9]+", "-", step.pattern.lower()).strip("-")

        def matching(text: str) -> tuple[list[str], str]:
            hits = [line for line in text.splitlines() if step.pattern in line]
            kept = hits[-step.max_lines :]
            whole = len(hits) == len(kept) and len(text.encode()) < GREP_LIMIT_BYTES
            return kept, "" if whole else f"newest {len(kept)} matching lines kept"

        self._from_start(
            step.id, pod, container, f"grep-{label}", {"grep": step.pattern}, GREP_LIMIT_BYTES,
            matching, f'grep "{step.pattern}" {ref(pod)}',
        )  # fmt: skip

    def _from_start(
        self,
        step_id: str,
        pod: dict[str, Any],
        container: str,
        part: str,
        fields: dict[str, Any],
        limit_bytes: int,
        keep: Callable[[str], tuple[list[str], str]],
        what: str,
    ) -> None:
        """A read of a container's current log from its start (`limitBytes`, no tail) of which
        `keep` keeps some lines and says why it left others ("" when it left none it should
        have kept)."""
        r = ref(pod)
        art: dict[str, Any] = {
            "id": artifact_id("log", r.namespace, r.name, container, part),
            "step": step_id,
            "type": "log",
            "namespace": r.namespace,
            "pod": r.name,
            "container": container,
            "previous": False,
            **fields,
        }

        def work() -> None:
            self._require_access(r.namespace)
            text = self.kube.log(
                r.namespace, r.name, container, previous=False, tail=None,
                limit_bytes=limit_bytes,
            )  # fmt: skip
            kept, cut = keep(text)
            member = grep_member(r.namespace, r.name, container, part)
            self.writer.put(member, ("\n".join(kept) + ("\n" if kept else "")).encode())
            art.update(paths=[member], lines=len(kept))
            if cut:
                art.update(status="truncated", message=cut)

        self.ledger.attempt(art, what, work)

    def _require_access(self, namespace: str) -> None:
        if self.kube.can("get", "pods", namespace=namespace, subresource="log") is False:
            raise CallFailed("forbidden", f'RBAC does not allow "get pods/log" in {namespace}')


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
