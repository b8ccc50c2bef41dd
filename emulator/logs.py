"""pods/log: a container's recorded log with `container`, `previous`, `tailLines` and
`limitBytes`, and the API server's wording when there is none to give."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cluster import LogKey
from .status import bad_request
from .transport import Request, Response

# Containers in these waiting states have never run, so they have no log yet.
_NEVER_STARTED = {
    "ContainerCreating",
    "PodInitializing",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}


def log_response(
    req: Request, pod: dict[str, Any], ns: str, name: str, logs: Mapping[LogKey, str]
) -> Response:
    """The log of the container the request names (or the pod's only one)."""
    container = pod_container(req, pod, name)
    previous = req.flag("previous")
    text = logs.get(LogKey(ns, name, container, previous))
    if text is None:
        if previous:
            raise bad_request(
                f'previous terminated container "{container}" in pod "{name}" not found'
            )
        waiting = _waiting_reason(pod, container)
        if waiting is not None:
            raise bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: {waiting}'
            )
        text = ""
    if text and not text.endswith("\n"):
        text += "\n"
    tail = req.int_param("tailLines")
    if tail is not None and tail >= 0:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-tail:]) if tail else ""
    body = text.encode("utf-8")
    limit = req.int_param("limitBytes")
    if limit is not None and limit > 0:
        body = body[:limit]
    return Response(200, body, "text/plain")


def pod_container(req: Request, pod: dict[str, Any], name: str) -> str:
    """The container a log or exec request means, or a 400 worded like the API server's."""
    spec = pod.get("spec") or {}
    containers = [c.get("name") for c in spec.get("containers") or []]
    every = containers + [
        c.get("name")
        for part in ("initContainers", "ephemeralContainers")
        for c in spec.get(part) or []
    ]
    container = req.query.get("container", "")
    if not container:
        if len(containers) == 1:
            return str(containers[0])
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        raise bad_request(
            f"a container name must be specified for pod {name}, "
            f"choose one of: [{' '.join(str(c) for c in containers)}]"
        )
    if container not in every:
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


def _waiting_reason(pod: dict[str, Any], container: str) -> str | None:
    status = pod.get("status") or {}
    for part in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(part) or []:
            if cs.get("name") != container:
                continue
            reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
            if reason in _NEVER_STARTED and not cs.get("restartCount"):
                return str(reason)
    return None
