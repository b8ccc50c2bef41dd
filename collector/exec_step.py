"""The --exec step: which containers the manual's checks run in, each run an artifact.

Workload checks run in the main container of each --pod, then of every running TF workload
pod outside the TF namespace, at most `limit` pods in all; node checks run in each running
hypervisor pod, which answers for its GPU node. How one command runs, and the checks
themselves, are collector.execs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s.tensorfusion import INJECT_CONTAINER

from .bundle import BundleWriter, exec_member
from .execs import CONTAINER_CHECKS, NODE_CHECKS, ExecCheck, run_exec
from .kube import Kube
from .ledger import Job, Ledger, artifact_id
from .plan import ExecStep
from .store import ObjectStore
from .targets import PodRef, Targets, component, ref


@dataclass
class ExecChecks:
    kube: Kube
    ledger: Ledger
    writer: BundleWriter
    store: ObjectStore
    namespace: str  # the TensorFusion namespace
    limit: int  # pods that get the workload checks, --pod ones included
    timeout: float  # seconds, for each command
    extra: tuple[PodRef, ...]  # --pod

    def jobs(self, step: ExecStep, targets: Targets) -> list[Job]:
        jobs: list[Job] = []
        if step.target == "nodes":
            for pod in self.store.pods(self.namespace):
                if component(pod) == "hypervisor" and _running(pod):
                    container = _main_container(pod)
                    jobs.extend(
                        lambda p=pod, c=container, k=check: self._exec(step, p, c, k)
                        for check in NODE_CHECKS
                    )
            return jobs
        chosen = [self.store.pod(r) for r in self.extra]
        for r in targets.tf_pods:
            pod = self.store.pod(r)
            # Every TF workload pod outside the TF namespace (injected or not: a pod the
            # webhook skipped is exactly one whose limits are not enforced).
            if pod is not None and r.namespace != self.namespace and _running(pod):
                chosen.append(pod)
        seen: set[PodRef] = set()
        for pod in chosen:
            if pod is None or ref(pod) in seen or len(seen) >= self.limit:
                continue
            seen.add(ref(pod))
            container = _main_container(pod)
            jobs.extend(
                lambda p=pod, c=container, k=check: self._exec(step, p, c, k)
                for check in CONTAINER_CHECKS
            )
        return jobs

    def _exec(self, step: ExecStep, pod: dict[str, Any], container: str, check: ExecCheck) -> None:
        r = ref(pod)
        name = check.id.rsplit("/", 1)[-1]
        art: dict[str, Any] = {
            "id": artifact_id("exec", r.namespace, r.name, container, check.id),
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
                timeout=self.timeout,
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

        self.ledger.attempt(art, f"exec {check.id} in {r}/{container}", work)


def _running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def _main_container(pod: dict[str, Any]) -> str:
    """The container TensorFusion injects into (its annotation), else the first."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    wanted = annotations.get(INJECT_CONTAINER, "").split(",")[0].strip()
    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    return wanted if wanted in names else (names[0] if names else "")
