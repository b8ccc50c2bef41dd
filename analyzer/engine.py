"""Evaluating rules on a bundle. One failing rule never stops the others.

A rule sees only named data from the bundle reader: its subjects (`for_each`), the data
bound in `with`, and `tf` (namespace, release, version). Data that was not collected makes
the rule *skipped* with the reason, never *passed*.
"""

from __future__ import annotations

import functools
import gc
import heapq
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple

import jinja2

from . import cel
from .bundle import Bundle, Coverage, ref
from .functions import quantity
from .results import Analysis, Finding, RuleResult
from .rules import LANGS, TEXT_FIELDS, Expr, Rule

__all__ = ["RuleEvalError", "analyze", "evaluate", "quantity"]


class RuleEvalError(Exception):
    pass


class _Unavailable(cel.Unknown):
    """Data a subject needs was not collected; the message says which and why (in English and
    Chinese), `where` which object it was for (many subjects missing the same data make one
    line)."""

    def __init__(
        self, message: str, where: str = "", zh: str = "", for_subject: bool = False
    ) -> None:
        super().__init__(message)
        self.message, self.where, self.zh = message, where, zh or message
        self.for_subject = for_subject  # `where` is the namespace/name of whichever subject

    def where_for(self, subject: dict[str, Any] | None) -> str:
        if not self.for_subject or not subject:
            return self.where
        meta = subject.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    @classmethod
    def of(cls, cov: Coverage) -> _Unavailable:
        return cls(cov.message, zh=cov.message_zh)


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


def analyze(bundle: Bundle, rules: list[Rule]) -> Analysis:
    from .ranking import rank

    tf = {
        "namespace": bundle.tf_namespace,
        "release": bundle.manifest["tensorfusion"]["release"],
        "version": bundle.manifest["tensorfusion"].get("version") or "",
        "installed": bundle.manifest["tensorfusion"].get("installed"),
    }
    # The rules leave no cycles behind (handled exceptions drop their tracebacks; a test holds
    # a whole run to that), so the collector has nothing to find while they run: its passes
    # over the young objects of 237,000 rule/subject evaluations cost a tenth of a second.
    collecting = gc.isenabled()
    gc.disable()
    try:
        results = [evaluate(rule, bundle, tf) for rule in rules]
    finally:
        if collecting:
            gc.enable()
    findings = [f for r in results for f in r.findings]
    return Analysis(
        bundle=summary(bundle),
        results=results,
        roots=rank(findings),
        collection_gaps=bundle.failed_artifacts(),
        absent=bundle.absent_artifacts(),
        possible_secrets=[vars(leak) for leak in bundle.possible_secrets()],
    )


def summary(bundle: Bundle) -> dict[str, Any]:
    m = bundle.manifest
    return {
        "source": bundle.source,
        "created_at": m["created_at"],
        "tool_version": m["tool"]["version"],
        "server_version": m["cluster"].get("server_version"),
        "context": m["cluster"].get("context"),
        "tf_namespace": m["tensorfusion"]["namespace"],
        "tf_release": m["tensorfusion"]["release"],
        "tf_version": m["tensorfusion"].get("version"),
        "artifacts": len(m["artifacts"]),
    }


def evaluate(rule: Rule, bundle: Bundle, tf: dict[str, Any]) -> RuleResult:
    result = RuleResult(rule.id, rule.manual, rule.severity, rule.section, "passed")
    scope = Scope(bundle)
    try:
        shared = _shared_bindings(rule, bundle, scope)
        subjects = _subjects(rule, bundle, scope)
    except _Unavailable as exc:
        result.outcome, result.reason, result.reason_zh = "skipped", exc.message, exc.zh
        return result
    # The expressions read the bundle's objects in place: nothing is converted or copied.
    base = {"tf": tf, **{k: v for k, v in shared.items() if k not in rule.where}}
    own = _Own(rule, bundle)
    for name in rule.where:  # picked per subject, when an expression first reads them
        own[name] = (_Selection(bundle, rule.bindings[name], shared[name]), rule.where[name])
    by_id: dict[str, Finding] = {}
    gaps: list[tuple[str, str, str]] = []  # (what is missing, in Chinese, for which object)
    errors: list[str] = []
    name_of_subject, when = rule.subject, rule.when
    for subject in subjects:
        variables = _Variables(base)  # dict's own copy: no __init__ of ours per subject
        variables.own, variables.subject, variables.missing = own, subject or {}, None
        if name_of_subject:
            variables[name_of_subject] = subject
        try:
            fired = _run(when, variables)
            if fired is not True and fired is not False:
                raise RuleEvalError(f"when: must be true or false, got {type(fired).__name__}")
            finding = _finding(rule, variables, subject) if fired else None
        except _Unavailable as exc:
            gaps.append((exc.message, exc.zh, exc.where_for(subject)))  # not exc: its frames
            _unlink(exc)
            continue
        except RuleEvalError as exc:
            errors.append(f"{_subject_ref(subject)}: {exc}")
            _unlink(exc)
            continue
        finally:
            # A kept _Unavailable holds the frames it passed, which hold `variables`: a
            # cycle only the collector would free, for each of 10,000 subjects.
            if variables.missing:
                variables.missing.clear()
        if finding is not None:
            same = by_id.get(finding.id)
            if same is None:
                by_id[finding.id] = finding
                result.findings.append(finding)
            else:  # another Event about the same object: one finding, with both's evidence
                same.evidence += [e for e in finding.evidence if e not in same.evidence]
    if result.findings:
        result.outcome = "fired"
        result.reason = "; ".join(errors[:3])
    elif errors:
        result.outcome, result.reason = "error", "; ".join(errors[:3])
    elif gaps:
        result.outcome = "skipped"
        result.reason, result.reason_zh = _gaps_text(gaps, "en"), _gaps_text(gaps, "zh")
    return result


def _unlink(exc: BaseException | None) -> None:
    """Drop the tracebacks of an exception that was handled, and of its causes: each holds
    the frames it passed, which hold it (a cycle per subject otherwise, freed only by the
    collector: over a million objects for the rule set on a 10,000-pod bundle)."""
    while exc is not None:
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


def _gaps_text(gaps: list[tuple[str, str, str]], lang: str, shown: int = 3) -> str:
    """Why a rule was skipped, one clause per kind of missing data: `check X was not run
    (...): ns/a, ns/b, ns/c and 9,997 more`, not one clause per object."""
    zh = lang == "zh"
    where: dict[str, list[str]] = {}
    for en, chinese, obj in gaps:
        objects = where.setdefault(chinese if zh else en, [])
        if obj:
            objects.append(obj)
    clauses = []
    for message in sorted(where)[:shown]:
        objects = set(where[message])
        if not objects:
            clauses.append(message)
            continue
        extra = len(objects) - shown
        more = (f" 等另外 {extra:,} 个" if zh else f" and {extra:,} more") if extra > 0 else ""
        first = heapq.nsmallest(shown, objects)  # of 10,000 pods, not all need sorting
        clauses.append(f"{message}{'：' if zh else ': '}{', '.join(first)}{more}")
    if len(where) > shown:
        n = len(where) - shown
        clauses.append(f"另有 {n} 种缺失的数据" if zh else f"{n} more kinds of missing data")
    return ("；" if zh else "; ").join(clauses)


def _finding_ref(subject: dict[str, Any]) -> str:
    """What a finding is about: the object itself, or for an Event the object it is about
    (an Event's name changes with every occurrence; comparing bundles needs the same ref)."""
    involved = subject.get("involvedObject") if subject.get("kind") == "Event" else None
    if isinstance(involved, dict) and involved.get("kind") and involved.get("name"):
        return ref({"kind": involved["kind"], "metadata": involved})
    return ref(subject)


def _run_or_missing(
    expr: Expr, variables: dict[str, Any], missing: list[str], default: Any = None
) -> Any:
    try:
        return _run(expr, variables)
    except _Unavailable as exc:
        where = exc.where_for(getattr(variables, "subject", None))
        missing.append(f"(not collected: {exc.message}{': ' + where if where else ''})")
        return default


def _run(expr: Expr, variables: dict[str, Any]) -> Any:
    try:
        return expr.program.run(variables)
    except cel.CelError as exc:
        raise RuleEvalError(f"{expr.where}: {exc}") from exc


class _Selection:
    """A binding's objects narrowed to each subject by `where` (key -> value expression),
    answered from an index per key that the bundle keeps for every rule that asks again."""

    def __init__(self, bundle: Bundle, spec: dict[str, Any], objects: list[dict[str, Any]]) -> None:
        self.position = {id(o): i for i, o in enumerate(objects)}
        cache = _INDEXES.setdefault(bundle, {})
        base = _spec_key({k: v for k, v in spec.items() if k != "where"})
        self.indexes = {}
        for key in spec["where"]:
            if (base, key) not in cache:
                cache[(base, key)] = _index(objects, key)
            self.indexes[key] = cache[(base, key)]

    def __call__(self, variables: dict[str, Any], where: tuple[tuple[str, Expr], ...]) -> list[Any]:
        """The objects picked for the subject whose variables these are."""
        if len(where) == 1:
            # One key, one value: its bucket is already in bundle order and without repeats.
            ((key, expr),) = where
            wanted = _run(expr, variables)
            if isinstance(wanted, (str, int, bool)):
                return list(self.indexes[key].get(wanted, ()))
        found: dict[int, dict[str, Any]] = {}
        for key, expr in where:
            wanted = _run(expr, variables)
            index = self.indexes[key]
            for value in wanted if isinstance(wanted, list) else [wanted]:
                if isinstance(value, (str, int, bool)):
                    for obj in index.get(value, ()):
                        found.setdefault(id(obj), obj)
        if len(found) < 2:
            return list(found.values())
        return sorted(found.values(), key=lambda o: self.position[id(o)])  # bundle order


_INDEXES: weakref.WeakKeyDictionary[Bundle, dict[tuple[str, str], dict[Any, list[Any]]]] = (
    weakref.WeakKeyDictionary()
)


def _index(objects: list[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    index: dict[Any, list[dict[str, Any]]] = {}
    kind, _, name = key.partition(":")
    meta = kind + "s" if kind in ("label", "annotation") and name else None
    parts = key.split(".")
    # A path of field names only (`spec.nodeName`) is a plain walk down maps.
    plain = meta is None and not any(p == "*" or p.isdigit() for p in parts)
    for obj in objects:
        if meta is not None:  # the common key: one value or none, found without a walk
            values = ((obj.get("metadata") or {}).get(meta) or {}) if isinstance(obj, dict) else {}
            found = [values[name]] if isinstance(values, dict) and name in values else []
        elif plain:
            found = [obj]
            for part in parts:
                here = found[0]
                found = [here[part]] if isinstance(here, dict) and part in here else []
                if not found:
                    break
        else:
            found = _values_at(obj, parts)
        for value in found:
            if isinstance(value, (str, int, bool)):
                bucket = index.setdefault(value, [])
                if not bucket or bucket[-1] is not obj:  # two owners of one name: once
                    bucket.append(obj)
    return index


def _values_at(obj: Any, parts: list[str]) -> list[Any]:
    """The values of a `where` field path in one object, with `*` for every element of a
    list (a label or annotation key is `label:<key>`, read by `_index` itself)."""
    current = [obj]
    for part in parts:
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


def _spec_key(spec: dict[str, Any]) -> str:
    return repr(sorted(spec.items()))


def _subject_ref(subject: dict[str, Any] | None) -> str:
    return ref(subject) if subject else "(bundle)"


def _subjects(rule: Rule, bundle: Bundle, scope: Scope) -> list[dict[str, Any] | None]:
    if not rule.for_each:
        return [None]
    spec = rule.for_each
    resource, group = split_resource(spec["resource"])
    ns = scope.namespace(spec.get("namespace"))
    cov = bundle.coverage(resource, group=group, namespace=ns)
    if not cov.ok:
        raise _Unavailable.of(cov)
    return list(
        bundle.objects(
            resource,
            group=group,
            namespace=ns,
            labels=spec.get("labels"),
            fields=spec.get("fields"),
        )
    )


def _shared_bindings(rule: Rule, bundle: Bundle, scope: Scope) -> dict[str, Any]:
    bound: dict[str, Any] = {}
    for name, spec in rule.bindings.items():
        if "helm" in spec or "metrics" in spec:
            kind = "helm" if "helm" in spec else "metrics"
            data, status, message = bundle.document(kind)
            if data is None and not spec.get("optional"):
                raise _Unavailable(
                    f"{kind} data was not collected: {status} ({message})",
                    zh=f"没有收集 {kind} 数据：{status}（{message}）",
                )
            bound[name] = data
            continue
        if "objects" not in spec:
            continue
        resource, group = split_resource(spec["objects"])
        ns = scope.namespace(spec.get("namespace"))
        cov = bundle.coverage(resource, group=group, namespace=ns)
        if not cov.ok and not spec.get("optional"):
            raise _Unavailable.of(cov)
        bound[name] = bundle.objects(
            resource,
            group=group,
            namespace=ns,
            labels=spec.get("labels"),
            fields=spec.get("fields"),
        )
    return bound


class _Variables(dict):  # type: ignore[type-arg]
    """A subject's variables. Its own data (events, logs, exec output) is looked up only when
    an expression reaches it: a pod that the first condition rules out costs no log reading,
    and data that was not collected matters only where it would decide the result."""

    __slots__ = ("missing", "own", "subject")  # one of these per rule and subject: no __dict__
    own: _Own
    subject: dict[str, Any]
    missing: dict[str, _Unavailable] | None

    def __missing__(self, name: str) -> Any:
        missing = self.missing
        if missing is not None and name in missing:  # asked again: the same answer
            raise missing[name].with_traceback(None)
        found = self.own.get(name)
        if found is None:
            raise KeyError(name)
        read, spec = found
        try:
            value = self[name] = read(self, spec)
        except _Unavailable as exc:
            if missing is None:
                missing = self.missing = {}
            missing[name] = exc
            raise
        return value


class _Own(dict):  # type: ignore[type-arg]
    """A rule's own-data bindings: name -> (reader, spec), the same for every subject."""

    def __init__(self, rule: Rule, bundle: Bundle) -> None:
        super().__init__()
        self.bundle = bundle
        checks: set[str] | None = None
        for name, spec in rule.bindings.items():
            if "logs" in spec:
                # The subject's own logs, or those of the pods a `where` binding picked for it
                # (the hypervisor of a GPUNode, say).
                mine = spec["logs"] == rule.subject
                self[name] = (_subject_logs if mine else _selected_logs, _LogSpec.of_binding(spec))
            elif "events_for" in spec:
                self[name] = (_subject_events, spec)
            elif "exec" in spec:
                if checks is None:
                    checks = bundle.exec_checks()
                # A check run nowhere (no --exec): the same answer for every pod, made once.
                run = spec["check"] in checks
                self[name] = (_subject_exec, spec) if run else (_never_run, _not_run_error(spec))


def _subject_logs(v: _Variables, spec: _LogSpec) -> list[str]:
    return _log_lines(v.own.bundle, v.subject, spec)


def _selected_logs(v: _Variables, spec: _LogSpec) -> list[str]:
    return [line for pod in v[spec.of] for line in _log_lines(v.own.bundle, pod, spec)]


def _subject_events(v: _Variables, spec: dict[str, Any]) -> list[dict[str, Any]]:
    return _events(v.own.bundle, v.subject)


def _subject_exec(v: _Variables, spec: dict[str, Any]) -> dict[str, Any]:
    return _exec_output(v.own.bundle, v.subject, spec)


def _never_run(v: _Variables, error: _Unavailable) -> dict[str, Any]:
    raise error  # the subject it is missing for is the one the gap is recorded for


def _not_run_error(spec: dict[str, Any]) -> _Unavailable:
    en, zh = _not_run(spec["check"])
    return _Unavailable(en, "", zh, for_subject=True)


def _events(bundle: Bundle, obj: dict[str, Any]) -> list[dict[str, Any]]:
    cov = bundle.coverage("events", namespace=obj.get("metadata", {}).get("namespace"))
    if not cov.ok:
        raise _Unavailable.of(cov)
    return bundle.events_for(obj)


def _exec_output(bundle: Bundle, pod: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    meta = pod.get("metadata", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    found = bundle.exec_outputs(ns, name, spec["check"])
    if not found:
        en, zh = _not_run(spec["check"])
        raise _Unavailable(en, f"{ns}/{name}", zh)
    out = found[0]
    if out.status not in ("ok", "truncated"):
        raise _Unavailable(
            f"check {spec['check']}: {out.status} ({out.message})",
            f"{ns}/{name}",
            f"检查 {spec['check']}：{out.status}（{out.message}）",
        )
    return {
        "text": out.text,
        "lines": out.text.splitlines(),
        "exit_code": out.exit_code,
        "container": out.container,
        "argv": list(out.argv),
    }


@functools.cache
def _not_run(check: str) -> tuple[str, str]:
    # The same words for each of 10,000 pods of a bundle collected without --exec.
    return (
        f"check {check} was not run (tf-collect --exec runs it)",
        f"检查 {check} 没有运行（tf-collect --exec 会运行它）",
    )


class _LogSpec(NamedTuple):
    """What a logs binding reads, worked out once per rule, not once per pod."""

    of: str  # the subject, or a `where` binding of pods
    containers: list[str] | None  # None: every container of the pod
    which: tuple[bool, ...]  # previous run, current run, or both
    tail: int | None
    grep: str | None

    @classmethod
    def of_binding(cls, spec: dict[str, Any]) -> _LogSpec:
        prev = spec.get("previous", False)
        which = (True, False) if prev == "both" else (bool(prev),)
        return cls(spec["logs"], spec.get("containers"), which, spec.get("tail"), spec.get("grep"))


def _log_lines(bundle: Bundle, pod: dict[str, Any], spec: _LogSpec) -> list[str]:
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    if spec.which == (True,) and not bundle.has_logs(ns, name):
        return []  # no previous run was read of any of its containers: none had restarted
    pod_spec = pod.get("spec") or {}
    present = [c.get("name") for c in pod_spec.get("containers", ())]
    if pod_spec.get("initContainers"):
        present += [c.get("name") for c in pod_spec["initContainers"]]
    wanted = present if spec.containers is None else [c for c in spec.containers if c in present]
    which, tail, grep, logs = spec.which, spec.tail, spec.grep, bundle.log
    lines: list[str] = []
    for container in wanted:
        for previous in which:
            log = logs(ns, name, container, previous, grep)
            if log is None:
                if previous:
                    continue  # never attempted: the container had not restarted
                raise _Unavailable(
                    "logs were not collected", f"{ns}/{name}/{container}", "没有收集日志"
                )
            if not log.collected:
                raise _Unavailable(
                    f"logs{' (previous)' if previous else ''}: {log.status} ({log.message})",
                    f"{ns}/{name}/{container}",
                    f"{'上一次运行的' if previous else ''}日志：{log.status}（{log.message}）",
                )
            lines.extend(log.lines[-tail:] if tail else log.lines)
    return lines


def _finding(rule: Rule, variables: dict[str, Any], subject: dict[str, Any] | None) -> Finding:
    """What a rule that fired on `subject` found. Data missing for its evidence or texts is
    said in the evidence, and never loses the finding."""
    missing: list[str] = []
    evidence: list[str] = []
    for expr in rule.evidence:
        value = _run_or_missing(expr, variables, missing)
        items = value if isinstance(value, list) else [value]
        for item in items:
            text = str(item) if item is not None else ""
            if text and text not in evidence:  # the same line in current and previous logs
                evidence.append(text)
    values = {
        name: _plain(_run_or_missing(expr, variables, missing, ""))
        for name, expr in rule.vars.items()
    }
    evidence += [m for m in dict.fromkeys(missing) if m not in evidence]
    meta = (subject or {}).get("metadata", {})
    context = {
        **values,
        "tf": variables["tf"],
        "object": {
            "kind": (subject or {}).get("kind", ""),
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "ref": ref(subject) if subject else "",
        },
    }
    try:
        texts = {
            f: {lang: rule.texts[f][lang].render(context) for lang in LANGS} for f in TEXT_FIELDS
        }
        commands = [t.render(context) for t in rule.commands]
    except jinja2.TemplateError as exc:
        raise RuleEvalError(f"text: {exc}") from exc
    return Finding(
        rule_id=rule.id,
        manual=rule.manual,
        severity=rule.severity,
        section=rule.section,
        objects=[_finding_ref(subject)] if subject else [],
        evidence=evidence,
        texts=texts,
        commands=commands,
        vars=values,
        consequence_of=rule.consequence_of,
    )


def _plain(value: Any) -> Any:
    """CEL results as plain JSON-able Python values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
