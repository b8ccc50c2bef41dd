"""An in-memory picture of a cluster: what the emulator serves.

Both a collected bundle (`tf-analyze --serve`) and a scenario source (readable YAML written by
hand, loaded by the tests) become a `ClusterData`, so they share one server.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from k8s.types import BUILTIN_TYPES, ResourceType


def version_info(git_version: str) -> dict[str, str]:
    """The /version answer of a server whose gitVersion is like "v1.30.4" or
    "v1.29.8-eks-a737599" (a vendor's build: its minor version ends in "+")."""
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)(.*)$", git_version)
    if m is None:
        raise ValueError(f"serverVersion {git_version!r} is not like v1.30.4")
    major, minor, _, suffix = m.groups()
    return {
        "major": major,
        "minor": minor + ("+" if suffix else ""),
        "gitVersion": git_version,
        # A made-up build, stable for each version.
        "gitCommit": hashlib.sha1(git_version.encode()).hexdigest(),
        "gitTreeState": "clean",
        "buildDate": "2024-08-14T00:00:00Z",
        "goVersion": "go1.22.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


@dataclass(frozen=True)
class LogKey:
    namespace: str
    pod: str
    container: str
    previous: bool = False


@dataclass(frozen=True)
class ExecKey:
    """One command in one container; argv is matched exactly, as the API receives it."""

    namespace: str
    pod: str
    container: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class ExecReply:
    """What a recorded command prints and how it ends."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    # Seconds the command keeps running after printing, before it exits (a slow command).
    delay: float = 0.0


@dataclass
class ClusterData:
    """Objects by resource, container logs, exec replies and the server version of one cluster."""

    types: dict[tuple[str, str], ResourceType] = field(default_factory=dict)
    # (group, resource) -> full objects, each with apiVersion and kind set.
    objects: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[LogKey, str] = field(default_factory=dict)
    server_version: dict[str, str] = field(default_factory=lambda: version_info("v1.30.4"))
    # Replies to `kubectl exec`; a command with no reply answers like a missing binary.
    execs: dict[ExecKey, ExecReply] = field(default_factory=dict)
    # Bumped by add_type/add_object, so readers may cache views of `objects` (the emulator's
    # sorted index). Appending to or removing from a list directly changes its length, which
    # readers also check; replacing an item in place needs add_object.
    revision: int = field(default=0, compare=False)

    def add_builtin_types(self) -> None:
        for rtype in BUILTIN_TYPES:
            self.add_type(rtype)

    def add_type(self, rtype: ResourceType) -> None:
        self.revision += 1
        self.types[rtype.key] = rtype
        self.objects.setdefault(rtype.key, [])

    def type_for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        for rtype in self.types.values():
            if rtype.kind == kind and rtype.api_version == api_version:
                return rtype
        return None

    def add_object(self, obj: dict[str, Any]) -> None:
        """Add or replace an object (identity: group, kind, namespace, name)."""
        rtype = self.type_for_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        if rtype is None:
            raise ValueError(
                f"no resource type for {obj.get('apiVersion')}/{obj.get('kind')} "
                f"({obj.get('metadata', {}).get('name')})"
            )
        self.revision += 1
        items = self.objects.setdefault(rtype.key, [])
        meta = obj.get("metadata", {})
        ident = (meta.get("namespace", ""), meta.get("name"))
        for i, old in enumerate(items):
            om = old.get("metadata", {})
            if (om.get("namespace", ""), om.get("name")) == ident:
                items[i] = obj
                return
        items.append(obj)
