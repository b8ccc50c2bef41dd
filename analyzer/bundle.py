"""The bundle reader: named accessors over one bundle, indexed once.

Rules, reports and the emulator ask for data by name (objects of a resource, the logs of a
container, the events of an object, the status of what was collected); only this module
knows that the manifest maps those names to members.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import weakref
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

import tf_support_schemas as schemas

from .archive import DEFAULT_LIMITS, Archive, Limits
from .background import Background
from .emulator.selectors import (
    EQUALS,
    EXISTS,
    IN,
    NOT_EXISTS,
    FieldSelector,
    LabelSelector,
    parse_field_selector,
    parse_label_selector,
)
from .emulator.selectors import _lookup as field_value  # what FieldSelector compares
from .errors import BundleError, ExitCode
from .leaks import Leak, Scanner, scan_member

OK_STATUSES = ("ok", "truncated")


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
class Coverage:
    """Whether the data for one resource/namespace was collected, and if not why."""

    status: str  # a manifest status, or "not_collected"
    message: str
    message_zh: str = ""

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


class _ObjectIndex:
    """The objects of one resource, in (namespace, name) order, indexed on first use by
    namespace, by label (key, value) and by the value of a selector field (most of a bundle's
    resources are never queried so). A query starts from the smallest matching bucket and
    applies the rest of the selector to that bucket only."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self._by_field: dict[str, dict[str, list[dict[str, Any]]]] = {}

    @functools.cached_property
    def _pos(self) -> dict[int, int]:
        return {id(o): i for i, o in enumerate(self.items)}

    @functools.cached_property
    def _by_ns(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            found[obj["metadata"].get("namespace")].append(obj)
        return found

    @functools.cached_property
    def _by_label(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            for key, value in (obj["metadata"].get("labels") or {}).items():
                found[(key, value)].append(obj)
        return found

    @functools.cached_property
    def _by_key(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for obj in self.items:
            for key in obj["metadata"].get("labels") or {}:
                found[key].append(obj)
        return found

    def _without(self, key: str) -> list[dict[str, Any]]:
        """The objects without the label `key` (`!key`), in order."""
        having = {id(o) for o in self._by_key.get(key, ())}
        return [o for o in self.items if id(o) not in having] if having else self.items

    def select(
        self, namespace: str | None, labels: LabelSelector | None, fields: FieldSelector | None
    ) -> list[dict[str, Any]]:
        # Each bucket holds exactly the objects that meet one term (the namespace, a label
        # requirement, a field requirement): only the other terms are tested on it.
        buckets: list[tuple[list[dict[str, Any]], object]] = []
        if namespace is not None:
            buckets.append((self._by_ns.get(namespace, []), namespace))
        for req in labels.requirements if labels else ():
            if req.operator in (EQUALS, IN):
                found = self._union([self._by_label.get((req.key, v), []) for v in req.values])
                buckets.append((found, req))
            elif req.operator == EXISTS:
                buckets.append((self._by_key.get(req.key, []), req))
            elif req.operator == NOT_EXISTS:
                buckets.append((self._without(req.key), req))
        for freq in fields.requirements if fields else ():
            if freq.operator == "=":
                buckets.append((self._field(freq.field).get(freq.value, []), freq))
        base, met = min(buckets, key=lambda b: len(b[0])) if buckets else (self.items, None)
        in_ns = namespace if namespace is not None and met is not namespace else None
        label_reqs = [r for r in (labels.requirements if labels else ()) if r is not met]
        field_reqs = [r for r in (fields.requirements if fields else ()) if r is not met]
        if in_ns is None and not label_reqs and not field_reqs:
            return list(base)
        return [
            o
            for o in base
            if (in_ns is None or o["metadata"].get("namespace") == in_ns)
            and all(r.matches(o["metadata"].get("labels") or {}) for r in label_reqs)
            and all((field_value(o, r.field) == r.value) == (r.operator == "=") for r in field_reqs)
        ]

    def _union(self, lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        if len(lists) == 1:
            return lists[0]
        merged = {id(o): o for chunk in lists for o in chunk}
        return sorted(merged.values(), key=lambda o: self._pos[id(o)])

    def _field(self, path: str) -> dict[str, list[dict[str, Any]]]:
        index = self._by_field.get(path)
        if index is None:
            index = self._by_field[path] = defaultdict(list)
            for obj in self.items:
                index[field_value(obj, path)].append(obj)
        return index


class Bundle:
    """One bundle, read and validated; every accessor is a lookup in an index."""

    def __init__(
        self, manifest: dict[str, Any], members: Mapping[str, bytes] | _Members, source: str
    ) -> None:
        self.manifest = manifest
        self.source = source
        self.artifacts: list[dict[str, Any]] = manifest["artifacts"]
        self._members = members if isinstance(members, _Members) else _Members.of(members)
        self._leaks: list[Leak] | None = None
        self._objects: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self._by_kind_name: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._events: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        self._logs: dict[tuple[str, str, str, bool, str | None], Log] = {}
        self._exec: dict[tuple[str, str, str, str], ExecOutput] = {}
        self._documents: dict[str, tuple[Any, str, str]] = {}  # helm, metrics
        self._by_id = {a["id"]: a for a in self.artifacts}
        self._indexes: dict[tuple[str, str], _ObjectIndex] = {}
        self._queries: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._coverage: dict[tuple[str, str, str | None], Coverage] = {}
        self._object_artifacts: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self._exec_by_pod: dict[tuple[str, str, str], list[ExecOutput]] = defaultdict(list)
        self._index()
        self._members.loaded()

    # ------------------------------------------------------------------ loading
    @classmethod
    def open(cls, path: Path, limits: Limits = DEFAULT_LIMITS) -> Bundle:
        """Read, check and index a bundle. Members stream in one at a time: once the manifest
        (the first member) is known, an object listing is parsed as it arrives and only its
        objects are kept, and bytes no accessor reads are dropped at once."""
        with cls.reading(path, limits) as reading:
            return reading.bundle()

    @classmethod
    @contextlib.contextmanager
    def reading(
        cls, path: Path, limits: Limits = DEFAULT_LIMITS, head_start: int = 0
    ) -> Iterator[_Reading]:
        """`open`, in two steps: the helper process (see background.py) starts reading at
        once, and `bundle()` reads the rest here. What the caller does in between runs beside
        the helper, which takes more of the listings for it: `head_start` is about how many
        bytes of listings this process could have parsed meanwhile."""
        # Nothing built here is garbage: the cyclic collector would only walk the growing
        # heap again and again (it cost more than the parsing itself).
        collecting = gc.isenabled()
        gc.disable()
        background = Background.start(
            path, Archive(path, limits).members, _manifest_listings, _parse_listing, head_start
        )
        reading = _Reading(cls, path, limits, background)
        try:
            yield reading
        except BaseException:
            if background is not None:
                background.cancel()
            raise
        finally:
            if collecting:
                gc.enable()
        bundle = reading.opened
        if collecting and bundle is not None and not gc.get_freeze_count():
            # What was built lives as long as the bundle, and holds no garbage: the collector
            # leaves it alone until the bundle goes (each full collection walked its million
            # objects: 0.7 s of the analysis of a 10,000-pod bundle, more in the first rule).
            gc.freeze()
            weakref.finalize(bundle, gc.unfreeze)

    def _member(self, name: str) -> bytes:
        if name not in self._members.names:
            raise BundleError(
                f"{self.source}: manifest names member {name!r}, which is not in the bundle",
                ExitCode.MANIFEST,
            )
        return self._members.raw[name]

    def _listing(self, name: str) -> Any:
        """An object listing's JSON: parsed while the bundle streamed in, or now."""
        found = self._members.listings.pop(name, _UNPARSED)
        if found is _UNPARSED:
            found = _parse_listing(self._member(name), f"{self.source}: {name}", {})
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
        for key, items in self._objects.items():
            items.sort(
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", ""))
            )
            self._indexes[key] = _ObjectIndex(items)
        for found in self._events.values():
            found.sort(key=_event_time)
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
            meta = obj["metadata"]
            self._by_kind_name[(obj["kind"], meta.get("namespace", ""), meta.get("name", ""))] = obj
            if obj["kind"] == "Event":
                inv = obj.get("involvedObject") or obj.get("regarding") or {}
                self._events[
                    (inv.get("kind", ""), inv.get("namespace", ""), inv.get("name", ""))
                ].append(obj)

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
        )
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
        """Objects of a resource; `labels`/`fields` use Kubernetes selector syntax.

        Answers come from the resource's index and are remembered per query: rules ask the
        same questions for every subject."""
        key = (resource, group, namespace, labels or None, fields or None)
        found = self._queries.get(key)
        if found is None:
            index = self._indexes.get((group, resource))
            found = (
                index.select(
                    namespace,
                    parse_label_selector(labels) if labels else None,
                    parse_field_selector(fields) if fields else None,
                )
                if index
                else []
            )
            self._queries[key] = found
        return list(found)

    def get(self, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        return self._by_kind_name.get((kind, namespace, name))

    def events_for(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        meta = obj.get("metadata") or {}
        found = self._events.get(
            (obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", "")), []
        )
        return list(found)  # sorted by time once, at load

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

    def logs(self) -> list[Log]:
        """Every whole log (filtered reads excluded)."""
        return list(self._whole_logs)

    def exec_output(
        self, namespace: str, pod: str, container: str, check: str
    ) -> ExecOutput | None:
        return self._exec.get((namespace, pod, container, check))

    def exec_outputs(self, namespace: str, pod: str, check: str) -> list[ExecOutput]:
        """Outputs of one check in any container of a pod."""
        return list(self._exec_by_pod.get((namespace, pod, check), []))

    def exec_checks(self) -> set[str]:
        """The checks that were run in some container (none without tf-collect --exec)."""
        return {check for (_, _, check) in self._exec_by_pod}

    def document(self, kind: str) -> tuple[Any, str, str]:
        """(data, status, message) of the Helm release projection or the metrics answer."""
        return self._documents.get(kind, (None, "not_collected", f"no {kind} step in this bundle"))

    def status_of(self, artifact_id: str) -> tuple[str, str] | None:
        """(status, message) of one artifact by its manifest id."""
        art = self._by_id.get(artifact_id)
        return (art["status"], art.get("message", "")) if art else None

    def coverage(self, resource: str, *, group: str = "", namespace: str | None = None) -> Coverage:
        """Was `resource` (in `namespace`, or everywhere) collected? The reason if not."""
        key = (resource, group, namespace)
        if key not in self._coverage:
            self._coverage[key] = self._coverage_of(resource, group, namespace)
        return self._coverage[key]

    def _coverage_of(self, resource: str, group: str, namespace: str | None) -> Coverage:
        relevant = [
            a
            for a in self._object_artifacts.get((resource, group), [])
            if namespace is None or a.get("namespace") in (None, namespace)
        ]
        good = [a for a in relevant if a["status"] in OK_STATUSES]
        if good:
            return Coverage("ok", "")
        if not relevant:
            where = f" in {namespace}" if namespace else ""
            where_zh = f"（命名空间 {namespace}）" if namespace else ""
            return Coverage(
                "not_collected",
                f"{_display(resource, group)}{where} was not collected",
                f"没有收集 {_display(resource, group)}{where_zh}",
            )
        worst = relevant[0]
        where = f" in {worst['namespace']}" if worst.get("namespace") else ""
        where_zh = f"（命名空间 {worst['namespace']}）" if worst.get("namespace") else ""
        return Coverage(
            worst["status"],
            f"{_display(resource, group)}{where}: {worst['status']} ({worst.get('message', '')})",
            f"{_display(resource, group)}{where_zh}：{worst['status']}（{worst.get('message', '')}）",
        )

    def possible_secrets(self) -> list[Leak]:
        """Members that still hold something shaped like a secret (see leaks.py): every member
        but the manifest, scanned as it streamed in (or read again, for a bundle made from a
        mapping of members)."""
        if self._leaks is None:
            found: list[Leak] | None = self._members.leaks
            if found is None:
                found = []
                for name, data in self._members.again():
                    if name != "manifest.json":
                        found += scan_member(name, data)
            self._leaks = sorted(found, key=lambda leak: leak.member)
        return list(self._leaks)

    def failed_artifacts(self) -> list[dict[str, Any]]:
        return [a for a in self.artifacts if a["status"] not in (*OK_STATUSES, "not_found")]

    def absent_artifacts(self) -> list[dict[str, Any]]:
        """What the API answered does not exist (a CRD not installed): not a failure."""
        return [a for a in self.artifacts if a["status"] == "not_found"]


def _display(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _event_time(ev: dict[str, Any]) -> str:
    return str(ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp") or "")


def parse_json(raw: bytes, what: str) -> Any:
    """A member's JSON, or a BundleError naming it. Nesting deeper than the parser's recursion
    limit is refused like any other invalid JSON (a hostile bundle, never a traceback)."""
    return _parse(raw, what, None)


def _parse_listing(raw: bytes, what: str, memo: dict[str, str]) -> Any:
    """An object listing's JSON with its repeated strings shared (see `_share`), or the
    BundleError that reading it raises, returned to be raised in its turn."""
    try:
        return _parse(raw, what, memo)
    except BundleError as exc:
        return exc


def _parse(raw: bytes, what: str, memo: dict[str, str] | None) -> Any:
    # orjson first, for speed; whatever it refuses (NaN, a BOM, UTF-16, lone surrogates,
    # nesting past 1,024) or may have read differently (an integer beyond 64 bits becomes
    # a float there) goes to the standard library, whose value or message stands as before.
    try:
        return _share(orjson.loads(raw), {} if memo is None else memo)
    except (orjson.JSONDecodeError, _Inexact):
        pass
    except RecursionError:
        raise _too_deep(what) from None
    try:
        return json.loads(raw)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        raise BundleError(f"{what} is not valid JSON ({exc})", ExitCode.MANIFEST) from exc


def _too_deep(what: str) -> BundleError:
    return BundleError(f"{what} is nested too deeply to be a bundle member", ExitCode.MANIFEST)


class _Inexact(Exception):
    """orjson read a number as a float outside the 64-bit integer range: it may have been a
    larger integer, which the standard library keeps exact."""


_INT64 = 2.0**63


def _share(value: Any, memo: dict[str, str]) -> Any:
    """`value` with each string replaced by the first equal one in `memo`: a bundle repeats
    the same names, labels, images and timestamps across thousands of objects. Walking the
    value also stops where the standard library's parser stops (RecursionError), and raises
    _Inexact on a float outside the 64-bit integer range."""
    kind = type(value)
    if kind is dict or kind is list:
        _share_in(value, memo.setdefault)
    elif kind is str:
        return memo.setdefault(value, value)
    elif kind is float and not -_INT64 < value < _INT64:
        raise _Inexact
    return value


def _share_in(container: dict[str, Any] | list[Any], same: Callable[[str, str], str]) -> None:
    slots = container.items() if type(container) is dict else enumerate(container)
    for slot, v in slots:
        kind = type(v)
        if kind is str:
            container[slot] = same(v, v)
        elif kind is dict or kind is list:
            _share_in(v, same)
        elif kind is float and not -_INT64 < v < _INT64:
            raise _Inexact


_UNPARSED = object()


@dataclass
class _Members:
    """What a bundle keeps of its members: every name; the bytes of the members read as text
    or as documents, until they are indexed; the object listings parsed as they streamed in
    (or the error each raised, raised in the manifest's order); and how to read them all
    again for the leak scan."""

    names: Container[str]
    raw: Mapping[str, bytes]
    again: Callable[[], Iterable[tuple[str, bytes]]]
    listings: dict[str, Any] = field(default_factory=dict)
    keep_raw: bool = False  # the caller's own mapping: it is also what `again` reads
    leaks: list[Leak] | None = None  # found while the members streamed in, if they did

    @classmethod
    def of(cls, members: Mapping[str, bytes]) -> _Members:
        return cls(members.keys(), members, members.items, keep_raw=True)

    def loaded(self) -> None:
        """The index is built: no accessor reads a member's bytes again."""
        self.listings = {}
        if not self.keep_raw:
            self.raw = {}


@dataclass
class _Reading:
    """A bundle being opened (`Bundle.reading`)."""

    cls: type[Bundle]
    path: Path
    limits: Limits
    background: Background | None
    opened: Bundle | None = None

    def bundle(self) -> Bundle:
        archive = Archive(self.path, self.limits)
        loader = _Loader(str(self.path), self.background)
        for name, data in archive.members():
            loader.add(name, data)
        manifest, members = loader.finish(archive.again)
        self.opened = self.cls(manifest, members, str(self.path))
        return self.opened


class _Loader:
    """Takes a bundle's members as they stream in. The manifest is checked when it arrives,
    and its errors are raised once the whole archive passed its own checks, as before. Then
    an object listing is parsed at once and its bytes dropped, and only the members that a
    log, exec or document artifact reads are kept. Members before the manifest wait for it."""

    def __init__(self, source: str, background: Background | None = None) -> None:
        self.source = source
        self.manifest: dict[str, Any] | None = None
        self.problem: BundleError | None = None
        self.seen_manifest = False
        self.names: set[str] = set()
        self.raw: dict[str, bytes] = {}
        self.listings: dict[str, Any] = {}
        self.waiting: dict[str, bytes] = {}
        self.memo: dict[str, str] = {}
        self.to_parse: set[str] = set()
        self.to_keep: set[str] = set()
        # A second process, where one can run beside this one, looks for secrets and parses
        # some of the listings (`pending` until they arrive). Without it the look is made
        # here while the bytes are here (reading the archive again only for it cost a third
        # of the scan).
        self.helper = background
        self.scanner = Scanner() if background is None else None
        self.pending: set[str] = set()

    def add(self, name: str, data: bytes) -> None:
        if name == "manifest.json":
            self.seen_manifest = True
            try:
                self.manifest = _checked_manifest(data, self.source)
            except BundleError as exc:
                self.problem = exc
                self.waiting = {}  # never read: the bundle is refused
                return
            self._plan(self.manifest["artifacts"])
            waiting, self.waiting = self.waiting, {}
            for early, early_data in waiting.items():
                self._take(early, early_data)
            if self.helper is not None:  # as it does, from the members that follow
                self.helper.begin(self.to_parse - self.to_keep)
            return
        self.names.add(name)
        if self.problem is None and self.scanner is not None:
            self.scanner.add(name, data)
        if self.manifest is not None:
            if self.helper is not None and self.helper.takes(name, len(data)):
                self.pending.add(name)
            else:
                self._take(name, data)
        elif self.problem is None:
            self.waiting[name] = data
        if self.helper is not None:
            self.helper.collect()  # what it sent so far: its pipe must not fill

    def finish(
        self, again: Callable[[], Iterable[tuple[str, bytes]]]
    ) -> tuple[dict[str, Any], _Members]:
        if not self.seen_manifest:
            raise BundleError(
                f"{self.source}: no manifest.json: not a tf-collect bundle", ExitCode.MANIFEST
            )
        if self.problem is not None:
            raise self.problem
        assert self.manifest is not None
        if self.helper is None:
            assert self.scanner is not None
            leaks: list[Leak] | None = self.scanner.finish()
        else:
            leaks = self._from_helper(self.helper, again)
        return self.manifest, _Members(self.names, self.raw, again, self.listings, leaks=leaks)

    def _from_helper(
        self, helper: Background, again: Callable[[], Iterable[tuple[str, bytes]]]
    ) -> list[Leak] | None:
        """The listings the helper parsed, and its leaks (None: it could not tell). What it
        sent as bytes, or never sent, is parsed here."""
        helper.collect(wait=True)
        for name in self.pending:
            if name in helper.received:
                self.listings[name] = helper.received.pop(name)
            elif name in helper.raw:
                self._take(name, helper.raw.pop(name))
        missing = self.pending - self.listings.keys()
        if missing:
            for name, data in again():
                if name in missing:
                    self._take(name, data)
        return helper.leaks

    def _plan(self, artifacts: list[dict[str, Any]]) -> None:
        self.to_parse, self.to_keep = _listings_and_kept(artifacts)

    def _take(self, name: str, data: bytes) -> None:
        if name in self.to_parse:
            self.listings[name] = _parse_listing(data, f"{self.source}: {name}", self.memo)
        if name in self.to_keep:
            self.raw[name] = data


def _listings_and_kept(artifacts: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The members that are object listings to parse, and those the index reads as bytes."""
    to_parse: set[str] = set()
    to_keep: set[str] = set()
    for art in artifacts:
        if art["type"] != "objects":
            to_keep.update(art.get("paths", []))
        elif art["status"] in OK_STATUSES:
            to_parse.update(art.get("paths", []))
    return to_parse, to_keep


def _manifest_listings(raw: bytes) -> set[str] | None:
    """The listings the helper may parse (not one whose bytes are needed too: the loader's
    `to_parse - to_keep`), read off a manifest's bytes; None for one it cannot read (this
    process then refuses the bundle, or reads it all itself)."""
    try:
        artifacts = orjson.loads(raw)["artifacts"]
        if not isinstance(artifacts, list):
            return None
        to_parse, to_keep = _listings_and_kept(artifacts)
        return to_parse - to_keep
    except Exception:  # anything a hostile manifest makes the plan trip on
        return None


def _checked_manifest(raw: bytes, source: str) -> dict[str, Any]:
    manifest = parse_json(raw, f"{source}: manifest.json")
    if not isinstance(manifest, dict):
        raise BundleError(f"{source}: manifest.json is not a JSON object", ExitCode.MANIFEST)
    version = manifest.get("format_version")
    if version != schemas.FORMAT_VERSION:
        raise BundleError(
            f"{source}: bundle format_version {version!r} is not supported "
            f"(this tf-analyze reads {schemas.FORMAT_VERSION}); upgrade tf-support",
            ExitCode.UNSUPPORTED,
        )
    problems = schemas.errors("manifest", manifest)
    if problems:
        raise BundleError(f"{source}: manifest.json is invalid: {problems[0]}", ExitCode.MANIFEST)
    for i, art in enumerate(manifest["artifacts"]):
        for key in _NEEDS.get(art["type"], ()):
            if not isinstance(art.get(key), str):
                raise BundleError(
                    f"{source}: manifest.json is invalid: artifacts/{i}: a {art['type']} "
                    f"artifact needs a string {key!r}",
                    ExitCode.MANIFEST,
                )
    return manifest


# What the index reads of each type of artifact, beyond what the schema requires of all.
_NEEDS = {"log": ("namespace", "pod", "container"), "objects": ("resource",)}
