"""The objects a run keeps from its list calls, merged and written once at the end.

Lists overlap (pods of the TF namespace and of all namespaces; events of one pod and of its
namespace), so objects are kept by uid per (group, resource, namespace) and each file holds
every object of its key once. The second phase finds its pods here.
"""

from __future__ import annotations

from typing import Any

from k8s.types import ResourceType

from .bundle import BundleWriter, objects_member
from .filters import strip
from .redact import Redactor, Structure
from .targets import PodRef

Key = tuple[str, str, str | None]  # (group, resource, namespace or None)


class ObjectStore:
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.objects: dict[Key, dict[str, dict[str, Any]]] = {}  # key -> uid -> object
        self.kinds: dict[tuple[str, str], ResourceType] = {}
        # id(kept object) -> (the object, its structural pass); the object is held so its id
        # cannot be reused by another.
        self._structured: dict[int, tuple[dict[str, Any], Structure]] = {}

    def keep(self, res: ResourceType, namespace: str | None, item: dict[str, Any]) -> str:
        """Keep one listed object (trimmed); returns the member it will be written to."""
        item.setdefault("apiVersion", f"{res.group}/{res.version}" if res.group else res.version)
        item.setdefault("kind", res.kind)
        meta = item.setdefault("metadata", {})
        uid = meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
        kept = strip(item)
        self.objects.setdefault((res.group, res.resource, namespace), {})[uid] = kept
        # The structural redaction pass runs here, in the worker thread while others wait on
        # the network, rather than for every object at the end of the run.
        self._structured[id(kept)] = (kept, self.redactor.structure(kept))
        self.kinds[(res.group, res.resource)] = res
        return objects_member(res.resource, res.group, namespace)

    def touch(self, res: ResourceType, namespace: str | None) -> str:
        """Record a list that answered: its file is written even when it holds no object
        ("there were none" is data too). Returns the member."""
        self.objects.setdefault((res.group, res.resource, namespace), {})
        self.kinds[(res.group, res.resource)] = res
        return objects_member(res.resource, res.group, namespace)

    def pods(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Pods kept so far, of one namespace or of all, sorted by namespace and name."""
        found = []
        for (group, resource, ns), items in self.objects.items():
            if group == "" and resource == "pods" and (namespace is None or ns == namespace):
                found.extend(items.values())
        return sorted(found, key=lambda p: (p["metadata"].get("namespace"), p["metadata"]["name"]))

    def pod(self, r: PodRef) -> dict[str, Any] | None:
        for pod in self.objects.get(("", "pods", r.namespace), {}).values():
            if pod["metadata"].get("name") == r.name:
                return pod
        return None

    def write(self, writer: BundleWriter) -> None:
        """One list object per key, its items sorted by namespace and name."""
        for (group, resource, ns), items in sorted(
            self.objects.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")
        ):
            res = self.kinds.get((group, resource))
            ordered = sorted(
                items.values(),
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")),
            )
            head = {
                "apiVersion": f"{group}/{res.version}" if group and res else "v1",
                "kind": f"{res.kind if res else ''}List",
                "metadata": {},
            }
            writer.put_listing(
                objects_member(resource, group, ns), head, [self._structure(o) for o in ordered]
            )

    def _structure(self, obj: dict[str, Any]) -> Structure:
        known = self._structured.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        return self.redactor.structure(obj)
