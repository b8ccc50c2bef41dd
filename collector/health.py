"""Which pods need a closer look: the collector's own, cheap notion of unhealthy."""

from __future__ import annotations

from typing import Any

_BAD_WAITING = {
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RegistryUnavailable",
    "SignatureValidationFailed",
    "RunContainerError",
    "ContainerCreating",
    "PodInitializing",
}


def unhealthy_reason(pod: dict[str, Any]) -> str | None:
    """A short reason when the pod is not healthy, else None."""
    status = pod.get("status") or {}
    phase = status.get("phase")
    if status.get("reason") == "Evicted":
        return "Evicted"
    if phase in ("Pending", "Failed", "Unknown"):
        return phase
    for cs in status.get("initContainerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting:
            return f"Init:{waiting.get('reason', 'Waiting')}"
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        waiting = state.get("waiting")
        if waiting and waiting.get("reason") in _BAD_WAITING:
            return waiting["reason"]
        last = (cs.get("lastState") or {}).get("terminated") or {}
        # StartError/ContainerCannotRun: the runtime could not start it (a missing library
        # or device, nvidia-container-cli failing); the message says why.
        if last.get("reason") in ("OOMKilled", "Error", "StartError", "ContainerCannotRun"):
            return f"restarted ({last['reason']})"
        if phase == "Running" and not cs.get("ready") and not state.get("terminated"):
            return "not ready"
    return None
