"""A bundle's data model: named accessors over one bundle, indexed once.

Rules, reports and `--serve` ask for data by name (objects of a resource, the logs of a
container, the events of an object, the status of what was collected); only this package
knows that the manifest maps those names to members.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from k8s.events import Occurrence, events_v1_to_core
from k8s.selectors import parse_field_selector, parse_label_selector

from ..errors import BundleError, ExitCode
from .archive import DEFAULT_LIMITS, Limits
from .leaks import Leak
from .loading import OK_STATUSES, Loaded, load, parse_json


@dataclass(frozen=True)
class Log:
    namespace: str
    pod: str
    container: str
    previous: bool
    status: str
    message: str
    lines: tuple[str, ...]
    grep: str | None = None  # set for a filtered read: only lines containing it
    head: bool = False  # the first lines since the container started, not the newest

    @property
    def collected(self) -> bool:
        # A missing previous log is an answer ("there was no previous run"), not a gap.
        return self.status in OK_STATUSES or self.status == "not_found"


@dataclass(frozen=True)
class ExecOutput:
    """What one read-only command printed in a container, with the exact argv."""

    namespace: str
    pod: str
    container: str
    check: str  # the manual check it ran, e.g. limits-not-enforced/ld-preload
    argv: tuple[str, ...]
    exit_code: int | None
    status: str
    message: str
    text: str


@dataclass(frozen=True)
class Missing:
    """Data the bundle lacks, said as data: `kind` names the sentence that says it (one per
    language, in i18n.py) and `params` fill it in."""

    kind: str
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, kind: str, **params: object) -> Missing:
        return cls(kind, tuple(sorted((k, str(v)) for k, v in params.items())))


@dataclass(frozen=True)
class Coverage:
    """Whether the data of one resource (in one namespace, or everywhere) was collected: its
    status (a manifest status, or "not_collected" when no step asked for it), and what is
    missing when it was not."""

    status: str
    missing: Missing | None = None

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


def ref(obj: dict[str, Any]) -> str:
    """The stable reference of an object: ``Kind/namespace/name`` or ``Kind/name``."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return (
        f"{obj.get('kind', '?')}/{ns}/{meta.get('name')}"
        if ns
        else f"{obj.get('kind')}/{meta.get('name')}"
    )


class Bundle:
    """One bundle, read and validated once, its data arranged by the names it is asked by."""

    def __init__(self, loaded: Loaded, source: str) -> None:
        self.manifest = loaded.manifest
        self.source = source
        self.artifacts: list[dict[str, Any]] = self.manifest["artifacts"]
        self._loaded = loaded
        self._leaks = sorted(loaded.leaks, key=lambda leak: leak.member)
        self._objects: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        # Each Event once, by (namespace, name), in the core/v1 shape; True when it came
        # from events.k8s.io (the same Event read in the core view replaces it).
        self._event_objects: dict[tuple[str, str], tuple[bool, dict[str, Any]]] = {}
        self._occurrences: list[Occurrence] = []
        self._events: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        self._logs: dict[tuple[str, str, str, bool, str | None], Log] = {}
        self._heads: dict[tuple[str, str, str], Log] = {}
        self._exec: dict[tuple[str, str, str, str], ExecOutput] = {}
        self._documents: dict[str, tuple[Any, str, str]] = {}  # helm, metrics
        self._object_artifacts: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self._exec_by_pod: dict[tuple[str, str, str], list[ExecOutput]] = defaultdict(list)
        self._index()
        del self._loaded, self._event_objects  # every member read is in the indexes now

    @classmethod
    def open(cls, path: Path, limits: Limits = DEFAULT_LIMITS) -> Bundle:
        """Read, check and index the bundle at `path` (a .tar.zst file or its directory)."""
        return cls(load(path, limits), str(path))

    def _member(self, name: str) -> bytes:
        if name not in self._loaded.names:
            raise BundleError(
                f"{self.source}: manifest names member {name!r}, which is not in the bundle",
                ExitCode.MANIFEST,
            )
        return self._loaded.raw[name]

    def _listing(self, name: str) -> Any:
        if name not in self._loaded.listings:
            self._member(name)  # says that the member is missing
        found = self._loaded.listings[name]
        if isinstance(found, BundleError):
            raise found
        return found

    def _index(self) -> None:
        seen: set[str] = set()
        for art in self.artifacts:
            if art["type"] == "objects" and art["status"] in OK_STATUSES:
                for path in art.get("paths", []):
                    if path in seen:
                        continue
                    seen.add(path)
                    self._index_objects(art, path)
            elif art["type"] == "log":
                self._index_log(art)
            elif art["type"] == "exec":
                self._index_exec(art)
            elif art["type"] in ("helm", "metrics"):
                self._index_document(art)
        for art in self.artifacts:
            if art["type"] == "objects":
                self._object_artifacts[(art.get("resource"), art.get("group", ""))].append(art)
        for items in self._objects.values():
            items.sort(
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", ""))
            )
        self._occurrences = sorted(
            (Occurrence.of(ev) for _, ev in self._event_objects.values()),
            key=lambda occ: occ.at or _NEVER,
        )
        for occ in self._occurrences:
            self._events[occ.regarding].append(occ.event)
        for (ns, pod, _, check), out in sorted(self._exec.items()):
            self._exec_by_pod[(ns, pod, check)].append(out)
        self._whole_logs = [self._logs[k] for k in sorted(self._logs, key=str) if k[4] is None]
        self._pods_with_logs = {(k[0], k[1]) for k in self._logs}

    def _index_objects(self, art: dict[str, Any], path: str) -> None:
        listing = self._listing(path)
        items = listing.get("items") if isinstance(listing, dict) else None
        if not isinstance(items, list):
            raise BundleError(f"{self.source}: {path} is not a Kubernetes List", ExitCode.MANIFEST)
        key = (art.get("group", ""), art["resource"])
        for obj in items:
            if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
                continue
            obj.setdefault("kind", art.get("kind", ""))
            self._objects[key].append(obj)
            if obj["kind"] == "Event":
                self._keep_event(key[0] == "events.k8s.io", obj)

    def _keep_event(self, v1: bool, ev: dict[str, Any]) -> None:
        ident = (ev["metadata"].get("namespace", ""), ev["metadata"].get("name", ""))
        held = self._event_objects.get(ident)
        if held is None or (held[0] and not v1):
            self._event_objects[ident] = (v1, events_v1_to_core(ev) if v1 else ev)

    def _index_log(self, art: dict[str, Any]) -> None:
        lines: tuple[str, ...] = ()
        if art["status"] in OK_STATUSES and art.get("paths"):
            text = self._member(art["paths"][0]).decode("utf-8", errors="replace")
            lines = tuple(text.splitlines())
        log = Log(
            art["namespace"],
            art["pod"],
            art["container"],
            bool(art.get("previous")),
            art["status"],
            art.get("message", ""),
            lines,
            art.get("grep"),
            bool(art.get("head")),
        )
        if log.head:
            self._heads[(log.namespace, log.pod, log.container)] = log
        else:
            self._logs[(log.namespace, log.pod, log.container, log.previous, log.grep)] = log

    def _index_document(self, art: dict[str, Any]) -> None:
        data = None
        if art["status"] in OK_STATUSES and art.get("paths"):
            data = parse_json(self._member(art["paths"][0]), f"{self.source}: {art['paths'][0]}")
        self._documents[art["type"]] = (data, art["status"], art.get("message", ""))

    def _index_exec(self, art: dict[str, Any]) -> None:
        text = ""
        if art["status"] in OK_STATUSES and art.get("paths"):
            text = self._member(art["paths"][0]).decode("utf-8", errors="replace")
        out = ExecOutput(
            art.get("namespace") or "",
            art.get("pod", ""),
            art.get("container", ""),
            art.get("check") or art["step"],
            tuple(art.get("argv", [])),
            art.get("exit_code"),
            art["status"],
            art.get("message", ""),
            text,
        )
        self._exec[(out.namespace, out.pod, out.container, out.check)] = out

    # ------------------------------------------------------------------ accessors
    @property
    def tf_namespace(self) -> str:
        return self.manifest["tensorfusion"]["namespace"]

    def resources(self) -> list[tuple[str, str]]:
        return sorted(self._objects)

    def objects(
        self,
        resource: str,
        *,
        group: str = "",
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> list[dict[str, Any]]:
        """Objects of a resource, in (namespace, name) order; `labels`/`fields` use Kubernetes
        selector syntax. Each answer is one pass over the resource's objects: rules and reports
        ask a bundle a few dozen such questions, whatever its size (a rule's `where` picks
        per subject, and has its index: see rules/bindings.py)."""
        in_labels = parse_label_selector(labels) if labels else None
        in_fields = parse_field_selector(fields) if fields else None
        return [
            obj
            for obj in self._objects.get((group, resource), ())
            if (namespace is None or obj["metadata"].get("namespace") == namespace)
            and (in_labels is None or in_labels.matches(obj["metadata"].get("labels")))
            and (in_fields is None or in_fields.matches(obj))
        ]

    def events(self) -> list[Occurrence]:
        """Every Event once (read in both API groups, its core/v1 view), in the order it last
        happened (see k8s.events.last_time)."""
        return list(self._occurrences)

    def events_for(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """The Events about `obj`, in their core/v1 shape, in the order they last happened."""
        meta = obj.get("metadata") or {}
        found = self._events.get(
            (obj.get("kind") or "", meta.get("namespace") or "", meta.get("name") or ""), []
        )
        return list(found)

    def has_logs(self, namespace: str, pod: str) -> bool:
        """Whether any log of the pod was planned (collected or not)."""
        return (namespace, pod) in self._pods_with_logs

    def log(
        self,
        namespace: str,
        pod: str,
        container: str,
        previous: bool = False,
        grep: str | None = None,
    ) -> Log | None:
        return self._logs.get((namespace, pod, container, previous, grep))

    def log_head(self, namespace: str, pod: str, container: str) -> Log | None:
        """The first lines the container's current run logged (its start line is there)."""
        return self._heads.get((namespace, pod, container))

    def logs(self) -> list[Log]:
        """Every whole log (filtered reads excluded)."""
        return list(self._whole_logs)

    def exec_outputs(self, namespace: str, pod: str, check: str) -> list[ExecOutput]:
        """Outputs of one check in any container of a pod."""
        return list(self._exec_by_pod.get((namespace, pod, check), []))

    def exec_checks(self) -> set[str]:
        """The checks that were run in some container (none without tf-collect --exec)."""
        return {check for (_, _, check) in self._exec_by_pod}

    def document(self, kind: str) -> tuple[Any, str, str]:
        """(data, status, message) of the Helm release projection or the metrics answer."""
        return self._documents.get(kind, (None, "not_collected", f"no {kind} step in this bundle"))

    def coverage(self, resource: str, *, group: str = "", namespace: str | None = None) -> Coverage:
        """Was `resource` (in `namespace`, or everywhere) collected? The reason if not."""
        relevant = [
            a
            for a in self._object_artifacts.get((resource, group), [])
            if namespace is None or a.get("namespace") in (None, namespace)
        ]
        if any(a["status"] in OK_STATUSES for a in relevant):
            return Coverage("ok")
        what = f"{resource}.{group}" if group else resource
        if not relevant:
            return Coverage(
                "not_collected", Missing.of("not_collected", what=what, namespace=namespace or "")
            )
        worst = relevant[0]
        missing = Missing.of(
            "collection_failed",
            what=what,
            namespace=worst.get("namespace") or "",
            status=worst["status"],
            detail=worst.get("message", ""),
        )
        return Coverage(worst["status"], missing)

    def possible_secrets(self) -> list[Leak]:
        """Members that still hold something shaped like a secret (see leaks.py)."""
        return list(self._leaks)

    def failed_artifacts(self) -> list[dict[str, Any]]:
        return [a for a in self.artifacts if a["status"] not in (*OK_STATUSES, "not_found")]

    def absent_artifacts(self) -> list[dict[str, Any]]:
        """What the API answered does not exist (a CRD not installed): not a failure."""
        return [a for a in self.artifacts if a["status"] == "not_found"]


_NEVER = datetime.min.replace(tzinfo=timezone.utc)  # where an Event of unknown time sorts
