"""Small bundles built in the tests, through the real writer, and raw archives for bad cases."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

from analyzer.bundle.archive import DEFAULT_LIMITS, Limits, members
from analyzer.bundle.leaks import Leak, scan_member
from collector.bundle import BundleWriter, dump_json, log_member, objects_member
from tf_support_schemas.archive import zstd

KINDS = {
    ("", "pods"): ("v1", "Pod", True),
    ("", "events"): ("v1", "Event", True),
    ("events.k8s.io", "events"): ("v1", "Event", True),
    ("", "nodes"): ("v1", "Node", False),
    ("apps", "deployments"): ("v1", "Deployment", True),
    ("tensor-fusion.ai", "gpus"): ("v1", "GPU", False),
    ("tensor-fusion.ai", "gpunodes"): ("v1", "GPUNode", False),
    ("tensor-fusion.ai", "gpupools"): ("v1", "GPUPool", False),
    ("tensor-fusion.ai", "tensorfusionclusters"): ("v1", "TensorFusionCluster", False),
}


def base_manifest(
    artifacts: list[dict[str, Any]], namespace: str = "tensor-fusion-sys"
) -> dict[str, Any]:
    return {
        "format_version": 1,
        "tool": {"name": "tf-collect", "version": "test"},
        "created_at": "2026-11-30T10:00:00Z",
        "options": {"namespace": namespace, "release": "tensor-fusion-sys", "tail_lines": 200},
        "cluster": {"server_version": "v1.30.4"},
        "tensorfusion": {"namespace": namespace, "release": "tensor-fusion-sys"},
        "redaction": {"enabled": False, "counts": {}},
        "artifacts": artifacts,
    }


def make_bundle(
    path: Path,
    objects: dict[tuple[str, str], list[dict[str, Any]]] | None = None,
    logs: dict[tuple[str, str, str, bool], str] | None = None,
    failed: list[dict[str, Any]] | None = None,
) -> Path:
    """A bundle with the given objects ((group, resource) -> items) and logs."""
    writer = BundleWriter(path)
    artifacts: list[dict[str, Any]] = []
    for (group, resource), items in sorted((objects or {}).items()):
        version, kind, namespaced = KINDS[(group, resource)]
        by_ns: dict[str | None, list[dict[str, Any]]] = {}
        for item in items:
            ns = item["metadata"].get("namespace") if namespaced else None
            by_ns.setdefault(ns, []).append(item)
        for ns, chunk in sorted(by_ns.items(), key=lambda kv: kv[0] or ""):
            member = objects_member(resource, group, ns)
            writer.put(member, dump_json({"kind": f"{kind}List", "items": chunk}))
            artifacts.append(
                {
                    "id": f"objects:{resource}:{ns or ''}",
                    "step": "test",
                    "type": "objects",
                    "status": "ok",
                    "group": group,
                    "version": version,
                    "resource": resource,
                    "kind": kind,
                    "namespaced": namespaced,
                    "namespace": ns,
                    "paths": [member],
                    "count": len(chunk),
                }
            )
    for (ns, pod, container, previous), text in sorted((logs or {}).items()):
        member = log_member(ns, pod, container, previous)
        writer.put(member, text.encode())
        artifacts.append(
            {
                "id": f"log:{ns}:{pod}:{container}:{previous}",
                "step": "test",
                "type": "log",
                "status": "ok",
                "namespace": ns,
                "pod": pod,
                "container": container,
                "previous": previous,
                "paths": [member],
            }
        )
    artifacts.extend(failed or [])
    return writer.finish(base_manifest(artifacts))


def raw_tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """An uncompressed tar of exactly these members, bypassing every check of the writer."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buf.getvalue()


def raw_tar_zst(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A .tar.zst with exactly these members, bypassing every check of the writer."""
    path.write_bytes(zstd.compress(raw_tar(members)))
    return path


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def manifest_member(manifest: dict[str, Any] | None = None) -> tuple[tarfile.TarInfo, bytes]:
    return file_member("manifest.json", json.dumps(manifest or base_manifest([])).encode())


_IPV4 = __import__("re").compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def pseudonymise(text: str, mapping: dict[str, str]) -> str:
    """Text from the cluster as the redacted bundle reads it, given the redaction map.

    Addresses also appear dashed inside host names (ip-10-0-3-17): those follow the map too.
    """
    pairs = dict(mapping)
    for original, placeholder in mapping.items():
        if _IPV4.match(original) and _IPV4.match(placeholder):
            pairs.setdefault(original.replace(".", "-"), placeholder.replace(".", "-"))
    for original in sorted(pairs, key=len, reverse=True):
        text = text.replace(original, pairs[original])
    return text


def original_of(text: str, mapping: dict[str, str]) -> str:
    """The reverse of `pseudonymise`, for names read from a bundle."""
    reverse: dict[str, str] = {}
    for original, placeholder in mapping.items():
        reverse[placeholder] = original
        if _IPV4.match(original) and _IPV4.match(placeholder):
            reverse.setdefault(placeholder.replace(".", "-"), original.replace(".", "-"))
    for placeholder in sorted(reverse, key=len, reverse=True):
        text = text.replace(placeholder, reverse[placeholder])
    return text


def operator_pod(name: str, last_reason: str | None, restarts: int = 4) -> dict:
    """A TF controller pod whose last run ended with `last_reason` (None: healthy)."""
    cs = {
        "name": "controller",
        "ready": last_reason is None,
        "restartCount": restarts,
        "state": {"running": {"startedAt": "2026-11-30T09:00:00Z"}},
    }
    if last_reason:
        cs["lastState"] = {
            "terminated": {
                "reason": last_reason,
                "exitCode": 137,
                "finishedAt": "2026-11-30T08:59:00Z",
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "tensor-fusion-sys",
            "labels": {"tensor-fusion.ai/component": "operator"},
        },
        "spec": {
            "containers": [{"name": "controller", "resources": {"limits": {"memory": "2Gi"}}}]
        },
        "status": {"phase": "Running", "containerStatuses": [cs]},
    }


def read_members(source: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Every member of a bundle (a .tar.zst file or its directory), by its path."""
    return dict(members(source, limits))


def scan(found: dict[str, bytes]) -> list[Leak]:
    """What the analyzer's leak scan finds in these members, in member order."""
    return [leak for name in sorted(found) for leak in scan_member(name, found[name])]
