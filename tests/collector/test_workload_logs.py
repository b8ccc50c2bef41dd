"""Which workload pods' logs tf-collect reads: the previous run of every container that failed
and restarted, however many, then the others up to the step's cap, those that need attention
first. A workload that crashes every few hours is Running and Ready between crashes; the log of
the run that died is the only place its cause is written."""

from __future__ import annotations

from typing import Any

from collector.logs import Logs
from collector.plan import PLAN, LogStep

STEP = next(s for s in PLAN if isinstance(s, LogStep) and s.id == "cuda-oom/workload-logs")


class _Store:
    def __init__(self, pods: list[dict[str, Any]]) -> None:
        self._pods = pods

    def pods(self, namespace: str | None) -> list[dict[str, Any]]:
        return [p for p in self._pods if namespace in (None, p["metadata"]["namespace"])]


def _pod(name: str, *, restarts: int = 0, exit_code: int = 0, ready: bool = True) -> dict[str, Any]:
    last = {"terminated": {"exitCode": exit_code, "reason": "Error"}} if restarts else {}
    return {
        "metadata": {"namespace": "ml", "name": name, "labels": {"tensor-fusion.ai/enabled": "true"}},
        "spec": {"containers": [{"name": "app"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "app", "restartCount": restarts, "lastState": last, "ready": ready,
                 "state": {"running": {}}}
            ],
        },
    }  # fmt: skip


def _planned(pods: list[dict[str, Any]]) -> set[tuple[str, bool]]:
    logs = Logs(None, None, None, _Store(pods), "tf-system", 200, None)  # type: ignore[arg-type]
    logs.jobs(STEP)
    return {(pod, previous) for _, pod, _, previous in logs._planned}


def test_every_failed_and_restarted_workload_keeps_its_previous_log() -> None:
    assert STEP.max_pods == 50
    crashed = [_pod(f"crashed-{i:02}", restarts=3, exit_code=1) for i in range(60)]
    healthy = [_pod(f"healthy-{i:02}") for i in range(10)]
    planned = _planned(healthy + crashed)
    assert {p for p, prev in planned if prev} == {f"crashed-{i:02}" for i in range(60)}
    assert not any(p.startswith("healthy-") for p, _ in planned)  # the cap is spent


def test_the_cap_counts_the_failed_ones_and_fills_up_with_those_needing_attention() -> None:
    crashed = [_pod(f"crashed-{i}", restarts=2, exit_code=137) for i in range(3)]
    # Restarted after a clean exit: it needs attention, but no failure is in its previous log.
    clean = [_pod("clean-restart", restarts=1, exit_code=0)]
    healthy = [_pod(f"healthy-{i:02}") for i in range(60)]
    planned = _planned(healthy + clean + crashed)
    current = {p for p, prev in planned if not prev}
    assert len(current) == 50
    restarted = {f"crashed-{i}" for i in range(3)} | {"clean-restart"}
    assert restarted <= current
    assert {p for p, prev in planned if prev} == restarted
