"""The names a rule's expressions read, bound from the bundle.

Shared bindings (`with: {objects: ...}`, Helm values, metrics) are the same for every subject
and are read once per rule. A subject's own data (its logs, events and exec output, the objects
a `where` binding picks for it) and the rule's named expressions (`let`) are looked up only
when an expression first reads them, once per subject: a pod that the first condition rules
out costs no log reading, and data that was not collected matters only where it would decide
the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from tf_support_schemas.sources import source_of

from ..bundle import Bundle, Missing
from . import cel
from .loading import Expr, Rule


class RuleEvalError(Exception):
    pass


class Unavailable(cel.Unknown):
    """Data an expression needs was not collected: what is missing, and for which object
    (many subjects missing the same data make one clause of the skip's reason). A check run
    nowhere is one error for every subject: `for_subject` says it is missing for whichever
    subject asked."""

    def __init__(self, missing: Missing, where: str = "", *, for_subject: bool = False) -> None:
        super().__init__(missing.kind)
        self.missing, self.where, self.for_subject = missing, where, for_subject

    def where_for(self, subject: dict[str, Any] | None) -> str:
        if not self.for_subject or not subject:
            return self.where
        meta = subject.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def run(expr: Expr, variables: dict[str, Any]) -> Any:
    try:
        return expr.program.run(variables)
    except cel.CelError as exc:
        raise RuleEvalError(f"{expr.where}: {exc}") from exc


@dataclass(frozen=True)
class Scope:
    """Where a namespace spec points: 'tf', 'all' or a literal."""

    bundle: Bundle

    def namespace(self, spec: str | None) -> str | None:
        if spec in (None, "all"):
            return None
        if spec == "tf":
            return self.bundle.tf_namespace
        return spec


def split_resource(resource: str) -> tuple[str, str]:
    name, _, group = resource.partition(".")
    return name, group


def subjects(rule: Rule, bundle: Bundle) -> list[dict[str, Any] | None]:
    """The objects a rule runs on (`for_each`), or one run on the bundle as a whole."""
    if not rule.for_each:
        return [None]
    spec = rule.for_each
    resource, group = split_resource(spec["resource"])
    ns = Scope(bundle).namespace(spec.get("namespace"))
    cov = bundle.coverage(resource, group=group, namespace=ns)
    if not cov.ok:
        raise Unavailable(cov.missing)  # type: ignore[arg-type]
    return bundle.objects(
        resource, group=group, namespace=ns, labels=spec.get("labels"), fields=spec.get("fields")
    )


def shared_bindings(rule: Rule, bundle: Bundle) -> dict[str, Any]:
    """The bindings that are the same for every subject: objects, Helm values, metrics."""
    scope = Scope(bundle)
    bound: dict[str, Any] = {}
    for name, spec in rule.bindings.items():
        source = source_of(spec)
        if source.accessor == "document":  # the Helm release, the metrics answer
            kind = source.artifact
            data, status, message = bundle.document(kind)
            if data is None and not spec.get("optional"):
                raise Unavailable(
                    Missing.of("document_missing", document=kind, status=status, detail=message)
                )
            bound[name] = data
        elif source.name == "objects":
            resource, group = split_resource(spec["objects"])
            ns = scope.namespace(spec.get("namespace"))
            cov = bundle.coverage(resource, group=group, namespace=ns)
            if not cov.ok and not spec.get("optional"):
                raise Unavailable(cov.missing)  # type: ignore[arg-type]
            bound[name] = bundle.objects(
                resource,
                group=group,
                namespace=ns,
                labels=spec.get("labels"),
                fields=spec.get("fields"),
            )
    return bound


# A per-subject name's reader: (the subject's variables, its spec) -> value.
Reader = Callable[["Variables", Any], Any]


class Variables(dict):  # type: ignore[type-arg]
    """A subject's variables: the shared ones, the subject, and the per-subject names
    (`lazy`), each computed when an expression first reads it. Data found missing is
    remembered, so a second read says the same."""

    __slots__ = ("bundle", "lazy", "missing", "subject")  # one of these per rule and subject
    bundle: Bundle
    lazy: dict[str, tuple[Reader, Any]]
    subject: dict[str, Any]
    missing: dict[str, Unavailable] | None

    def __missing__(self, name: str) -> Any:
        missing = self.missing
        if missing is not None and name in missing:
            raise missing[name].with_traceback(None)
        found = self.lazy.get(name)
        if found is None:
            raise KeyError(name)
        read, spec = found
        try:
            value = self[name] = read(self, spec)
        except Unavailable as exc:
            if missing is None:
                missing = self.missing = {}
            missing[name] = exc
            raise
        return value


class PerSubject:
    """How a rule's per-subject names are read: the same for every subject of the rule."""

    def __init__(self, rule: Rule, bundle: Bundle, shared: dict[str, Any]):
        self.bundle = bundle
        self.readers: dict[str, tuple[Reader, Any]] = {}
        checks = bundle.exec_checks()
        for name, spec in rule.bindings.items():
            source = source_of(spec).name
            if source == "logs":
                # The subject's own logs, or those of the pods a `where` binding picked for it
                # (the hypervisor of a GPUNode, say).
                read = _subject_logs if spec["logs"] == rule.subject else _selected_logs
                if spec.get("optional"):
                    read = _or_no_lines(read)
                self.readers[name] = (read, LogSpec.of_binding(spec))
            elif source == "events_for":
                self.readers[name] = (_subject_events, spec)
            elif source == "exec":
                if spec["check"] in checks:
                    self.readers[name] = (_subject_exec, spec)
                else:  # run nowhere (no --exec): the same answer for every subject
                    missing = Missing.of("check_not_run", check=spec["check"])
                    self.readers[name] = (_never_run, Unavailable(missing, for_subject=True))
        for name, where in rule.where.items():
            selection = Selection(shared[name], where)
            self.readers[name] = (selection.pick, where)
        for name, expr in rule.lets.items():
            self.readers[name] = (_let, expr)

    def variables(self, base: dict[str, Any], subject: dict[str, Any] | None) -> Variables:
        variables = Variables(base)
        variables.bundle, variables.lazy = self.bundle, self.readers
        variables.subject, variables.missing = subject or {}, None
        return variables


def _let(v: Variables, expr: Expr) -> Any:
    try:
        return expr.program.run(v)
    except cel.CelError as exc:
        raise cel.CelError(f"{expr.where}: {exc}") from exc


def _or_no_lines(read: Reader) -> Reader:
    """A logs reader that reads logs not collected as no lines (an `optional` binding)."""

    def read_or_none(v: Variables, spec: LogSpec) -> list[str]:
        try:
            return read(v, spec)
        except Unavailable:
            return []

    return read_or_none


def _subject_logs(v: Variables, spec: LogSpec) -> list[str]:
    return log_lines(v.bundle, v.subject, spec)


def _selected_logs(v: Variables, spec: LogSpec) -> list[str]:
    return [line for pod in v[spec.of] for line in log_lines(v.bundle, pod, spec)]


def _subject_events(v: Variables, spec: dict[str, Any]) -> list[dict[str, Any]]:
    bundle: Bundle = v.bundle
    cov = bundle.coverage("events", namespace=v.subject.get("metadata", {}).get("namespace"))
    if not cov.ok:
        raise Unavailable(cov.missing)  # type: ignore[arg-type]
    return bundle.events_for(v.subject)


def _subject_exec(v: Variables, spec: dict[str, Any]) -> dict[str, Any]:
    bundle: Bundle = v.bundle
    meta = v.subject.get("metadata", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    found = bundle.exec_outputs(ns, name, spec["check"])
    if not found:
        raise Unavailable(Missing.of("check_not_run", check=spec["check"]), f"{ns}/{name}")
    out = found[0]
    if out.status not in ("ok", "truncated"):
        missing = Missing.of(
            "check_failed", check=spec["check"], status=out.status, detail=out.message
        )
        raise Unavailable(missing, f"{ns}/{name}")
    return {
        "text": out.text,
        "lines": out.text.splitlines(),
        "exit_code": out.exit_code,
        "container": out.container,
        "argv": list(out.argv),
    }


def _never_run(v: Variables, error: Unavailable) -> Any:
    raise error


class LogSpec(NamedTuple):
    """What a logs binding reads, worked out once per rule."""

    of: str  # the subject, or a `where` binding of pods
    containers: list[str] | None  # None: every container of the pod
    which: tuple[bool, ...]  # previous run, current run, or both
    tail: int | None
    grep: str | None

    @classmethod
    def of_binding(cls, spec: dict[str, Any]) -> LogSpec:
        prev = spec.get("previous", False)
        which = (True, False) if prev == "both" else (bool(prev),)
        return cls(spec["logs"], spec.get("containers"), which, spec.get("tail"), spec.get("grep"))


def log_lines(bundle: Bundle, pod: dict[str, Any], spec: LogSpec) -> list[str]:
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    if spec.which == (True,) and not bundle.has_logs(ns, name):
        return []  # no previous run was read of any of its containers: none had restarted
    pod_spec = pod.get("spec") or {}
    main = [c.get("name") for c in pod_spec.get("containers", ())]
    init = [c.get("name") for c in pod_spec.get("initContainers") or ()]
    present = main + init
    wanted = present if spec.containers is None else [c for c in spec.containers if c in present]
    lines: list[str] = []
    for container in wanted:
        for previous in spec.which:
            log = bundle.log(ns, name, container, previous, spec.grep)
            if log is None:
                if previous:
                    continue  # never attempted: the container had not restarted
                if spec.containers is None and container in init and container not in main:
                    # "Every container": tf-collect reads init containers' logs only where
                    # they can hold the fault (a pod stuck in Init, a hypervisor); one that
                    # finished is no reason to leave the app's own log unread.
                    continue
                raise Unavailable(Missing.of("logs_not_collected"), f"{ns}/{name}/{container}")
            if not log.collected:
                kind = "previous_logs_failed" if previous else "logs_failed"
                missing = Missing.of(kind, status=log.status, detail=log.message)
                raise Unavailable(missing, f"{ns}/{name}/{container}")
            lines.extend(log.lines[-spec.tail :] if spec.tail else log.lines)
    return lines


# ------------------------------------------------------------------------------ selections
class Selection:
    """A binding's objects narrowed to each subject by `where` (key -> value expression),
    answered from an index per key, built once per rule: a scan per subject would cost
    subjects x objects."""

    def __init__(self, objects: list[dict[str, Any]], where: tuple[tuple[str, Expr], ...]):
        self.position = {id(o): i for i, o in enumerate(objects)}
        self.indexes = {key: _index(objects, key) for key, _ in where}

    def pick(self, variables: Variables, where: tuple[tuple[str, Expr], ...]) -> list[Any]:
        """The objects picked for the subject whose variables these are, in bundle order."""
        found: dict[int, dict[str, Any]] = {}
        for key, expr in where:
            wanted = run(expr, variables)
            for value in wanted if isinstance(wanted, list) else [wanted]:
                if isinstance(value, (str, int, bool)):
                    for obj in self.indexes[key].get(value, ()):
                        found.setdefault(id(obj), obj)
        return sorted(found.values(), key=lambda o: self.position[id(o)])


def _index(objects: list[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    """The objects by each value at `key`: `label:<key>`, `annotation:<key>`, or a field path
    with `*` for every element of a list."""
    index: dict[Any, list[dict[str, Any]]] = {}
    for obj in objects:
        for value in _values_at(obj, key):
            if isinstance(value, (str, int, bool)):
                bucket = index.setdefault(value, [])
                if not bucket or bucket[-1] is not obj:  # two owners of one name: once
                    bucket.append(obj)
    return index


def _values_at(obj: Any, key: str) -> list[Any]:
    kind, _, name = key.partition(":")
    if kind in ("label", "annotation") and name:
        values = (obj.get("metadata") or {}).get(kind + "s") if isinstance(obj, dict) else None
        return [values[name]] if isinstance(values, dict) and name in values else []
    current = [obj]
    for part in key.split("."):
        step: list[Any] = []
        for value in current:
            if part == "*" and isinstance(value, list):
                step.extend(value)
            elif isinstance(value, dict) and part in value:
                step.append(value[part])
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                step.append(value[int(part)])
        current = step
    return current
