"""`tf-analyze BUNDLE --serve`: a collected bundle as a read-only Kubernetes API for kubectl."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import outputs
from emulator.cluster import ClusterData, LogKey, version_info
from emulator.server import Emulator
from k8s.types import ResourceType, crd_type

from .bundle import Bundle
from .errors import OutputError, PortError


def cluster_from_bundle(bundle: Bundle) -> ClusterData:
    """What the bundle saw of the cluster, in the emulator's model."""
    data = ClusterData()
    data.add_builtin_types()
    for crd in bundle.objects("customresourcedefinitions", group="apiextensions.k8s.io"):
        data.add_type(crd_type(crd, bundle.source))
    for art in bundle.artifacts:
        if art["type"] != "objects" or "resource" not in art:
            continue
        if art["status"] == "not_found":
            continue  # the API said there is no such resource: neither do we
        key = (art.get("group", ""), art["resource"])
        if key not in data.types:
            # A resource the bundle holds but whose CRD it did not collect: serve it plainly.
            data.add_type(
                ResourceType(
                    group=key[0],
                    version=art.get("version", "v1"),
                    resource=key[1],
                    kind=art.get("kind", ""),
                    namespaced=bool(art.get("namespaced")),
                )
            )
    for group, resource in bundle.resources():
        rtype = data.types[(group, resource)]
        items = data.objects.setdefault((group, resource), [])
        for obj in bundle.objects(resource, group=group):
            items.append({"apiVersion": rtype.api_version, **obj, "kind": rtype.kind})
    for log in bundle.logs():
        if log.lines or log.status in ("ok", "truncated"):
            text = "\n".join(log.lines) + ("\n" if log.lines else "")
            data.logs[LogKey(log.namespace, log.pod, log.container, log.previous)] = text
    server = bundle.manifest["cluster"].get("server_version")
    if server:
        data.server_version = version_info(server)
    return data


def serve_bundle(
    path: Path, *, port: int, kubeconfig: Path, announce: Callable[[str], None]
) -> None:
    """Serve until SIGINT/SIGTERM; the kubeconfig appears only once the server listens."""
    bundle = Bundle.open(path)
    _check_kubeconfig(kubeconfig)
    stop = threading.Event()
    try:
        server = Emulator(cluster_from_bundle(bundle), port=port)
    except OSError as exc:
        raise PortError(f"cannot serve on port {port}: {exc.strerror or exc}") from None
    with server as emu:
        text = emu.kubeconfig_text(context="tf-bundle", namespace=bundle.tf_namespace)
        outputs.write(
            kubeconfig, lambda fh: fh.write(text.encode()), replace=False, what="kubeconfig"
        )
        announce(f"Serving {path} read-only at {emu.url}")
        announce(f"  kubectl --kubeconfig {kubeconfig} get pods -A -o wide")
        announce("Press Ctrl-C to stop.")
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        stop.wait()
    kubeconfig.unlink(missing_ok=True)


def _check_kubeconfig(path: Path) -> None:
    """Refuse a kubeconfig path that exists: it may be another server's, still in use."""
    try:
        outputs.check(path, replace=False, what="kubeconfig")
    except outputs.OutputRefused as exc:
        taken = os.path.lexists(path)
        why = " (another tf-analyze --serve may be using it); remove it or" if taken else ";"
        raise OutputError(f"{exc}{why} give --kubeconfig-out another path") from None
