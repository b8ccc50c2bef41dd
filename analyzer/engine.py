"""Evaluating rules on a bundle. One failing rule never stops the others.

A rule sees only named data from the bundle reader: its subjects (`for_each`), the data
bound in `with`, and `tf` (namespace, release, version). Data that was not collected makes
the rule *skipped* with the reason, never *passed*.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import cel
import jinja2

from .bundle import Bundle, ref
from .results import Analysis, Finding, RuleResult
from .rules import LANGS, TEXT_FIELDS, Expr, Rule

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}


class RuleEvalError(Exception):
    pass


class _Unavailable(Exception):
    """Data a subject needs was not collected; the message says which and why."""


def quantity(value: Any) -> float:
    """A Kubernetes quantity ("80Gi", "165160m", 71) as a number."""
    if isinstance(value, (int, float)):
        return float(value)
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(2) not in _SUFFIX:
        raise RuleEvalError(f"not a quantity: {value!r}")
    return float(match.group(1)) * _SUFFIX[match.group(2)]


def dig(obj: Any, path: str, default: Any = None) -> Any:
    """obj at a dotted path ("status.phase"), or default where any step is missing."""
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return default
    return cur


def annotation(obj: Any, key: str) -> str:
    """metadata.annotations[key], or "" when absent (keys contain dots, so dig cannot)."""
    return str((dig(obj, "metadata.annotations", {}) or {}).get(key, ""))


def label(obj: Any, key: str) -> str:
    return str((dig(obj, "metadata.labels", {}) or {}).get(key, ""))


def extract(text: str, pattern: str) -> str:
    """The first group of `pattern` (a Python regex) in `text`, or "" when it does not match."""
    found = _regex(pattern).search(text)
    if not found:
        return ""
    return found.group(1) if found.groups() else found.group(0)


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise RuleEvalError(f"bad regex {pattern!r}: {exc}") from exc


def _max(values: list[Any], default: Any = 0.0) -> Any:
    return max(values) if values else default


def _min(values: list[Any], default: Any = 0.0) -> Any:
    return min(values) if values else default


CEL_FUNCTIONS = {
    "quantity": quantity,
    "dig": dig,
    "annotation": annotation,
    "label": label,
    "extract": extract,
    "max": _max,
    "min": _min,
}


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
    # Rules that share data run one after another, so one converted context is alive at a time.
    envs = Environments()
    first = _first_use(rules)
    order = sorted(range(len(rules)), key=lambda i: (first[env_key(rules[i])], i))
    evaluated = {i: evaluate(rules[i], bundle, tf, envs) for i in order}
    results = [evaluated[i] for i in range(len(rules))]
    findings = [f for r in results for f in r.findings]
    return Analysis(
        bundle=summary(bundle),
        results=results,
        roots=rank(findings),
        collection_gaps=bundle.failed_artifacts(),
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


def evaluate(
    rule: Rule, bundle: Bundle, tf: dict[str, Any], envs: Environments | None = None
) -> RuleResult:
    result = RuleResult(rule.id, rule.manual, rule.severity, rule.section, "passed")
    scope = Scope(bundle)
    try:
        shared = _shared_bindings(rule, bundle, scope)
        subjects = _subjects(rule, bundle, scope)
    except _Unavailable as exc:
        result.outcome, result.reason = "skipped", str(exc)
        return result
    env = (envs or Environments()).get(rule, {"tf": tf, **shared}, subjects)
    gaps: list[str] = []
    errors: list[str] = []
    for index, subject in enumerate(subjects):
        try:
            env.bind(index, _subject_bindings(rule, bundle, subject))
            finding = _evaluate_one(rule, env, subject)
        except _Unavailable as exc:
            gaps.append(str(exc))
            continue
        except RuleEvalError as exc:
            errors.append(f"{_subject_ref(subject)}: {exc}")
            continue
        if finding is not None:
            result.findings.append(finding)
    if result.findings:
        result.outcome = "fired"
        result.reason = "; ".join(errors[:3])
    elif errors:
        result.outcome, result.reason = "error", "; ".join(errors[:3])
    elif gaps:
        result.outcome, result.reason = "skipped", "; ".join(sorted(set(gaps))[:3])
    return result


_SUBJECTS = "__subjects"
_INDEX = "__index"
_OWN = "__own_"


class Env:
    """One CEL context for the rules that share the same data.

    Converting a Python value to CEL costs in proportion to its size (about a millisecond for a
    pod), and adding a variable to a context discards everything it converted. So the data
    every subject shares (all nodes, all GPUs) and the subjects themselves are added once;
    what is a subject's own (its events, logs, exec output) and which subject is current come
    through the context's resolver. The resolver converts a value at each place an expression
    names it, so each expression is run wrapped in one-element comprehensions that name each
    such value once and bind it to the rule's name for it (see `_wrapped`).
    """

    def __init__(self, shared: dict[str, Any], subjects: list[dict[str, Any] | None]) -> None:
        self.shared = shared
        self.subjects = subjects
        self.context = cel.Context()
        for name, value in shared.items():
            self.context.add_variable(name, value)
        self.context.add_variable(_SUBJECTS, [s if s is not None else {} for s in subjects])
        for fname, function in CEL_FUNCTIONS.items():
            self.context.add_function(fname, function)
        self._current: dict[str, Any] = {}
        self.context.set_variable_resolver(self._current.get)
        self.subject_name: str | None = None
        self.own_names: frozenset[str] = frozenset()

    def bind(self, index: int, own: dict[str, Any]) -> None:
        self._current.clear()
        self._current[_INDEX] = index
        for name, value in own.items():
            self._current[_OWN + name] = value
        self.own_names = frozenset(own)

    def __getitem__(self, name: str) -> Any:
        if name == self.subject_name:
            return self.subjects[self._current[_INDEX]]
        if name in self.own_names:
            return self._current[_OWN + name]
        return self.shared[name]

    def run(self, expr: Expr) -> Any:
        program = _wrapped(expr, self.subject_name, self.own_names)
        try:
            return program.execute(self.context)
        except RuleEvalError:
            raise
        except Exception as exc:  # the CEL runtime raises several builtin types
            raise RuleEvalError(f"{expr.where}: {type(exc).__name__}: {exc}") from exc


@functools.lru_cache(maxsize=4096)
def _compile_wrapped(source: str, subject: str | None, own: tuple[str, ...]) -> Any:
    text = f"({source})"
    for name in own:
        text = f"[{_OWN}{name}].map({name}, {text})[0]"
    if subject:
        text = f"[{_SUBJECTS}[{_INDEX}]].map({subject}, {text})[0]"
    return cel.compile(text)


def _wrapped(expr: Expr, subject: str | None, own: frozenset[str]) -> Any:
    """`expr` with the subject and its own data each named once (see Env)."""
    names = expr.names()
    used_own = tuple(sorted(n for n in own if n in names))
    used_subject = subject if subject in names else None
    if not used_own and used_subject is None:
        return expr.program
    return _compile_wrapped(expr.source, used_subject, used_own)


class Environments:
    """The CEL context of the data the current rule shares with others: rules that bind the
    same objects (every node, every GPU, every pod) reuse one conversion. Only the latest is
    kept (a context holds its own copy of every object it was given)."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._env: Env | None = None

    def get(self, rule: Rule, shared: dict[str, Any], subjects: list[dict[str, Any] | None]) -> Env:
        key = env_key(rule)
        if self._env is None or key != self._key:
            self._env = None  # free the old context before converting the new one
            self._key, self._env = key, Env(shared, subjects)
        self._env.subject_name = rule.subject
        return self._env


def env_key(rule: Rule) -> str:
    """Rules with the same key see the same shared data and subjects."""
    shared = sorted(
        (name, _spec_key(spec))
        for name, spec in rule.bindings.items()
        if "objects" in spec or "helm" in spec or "metrics" in spec
    )
    subjects = _spec_key({k: v for k, v in (rule.for_each or {}).items() if k != "as"})
    return repr((shared, subjects))


def _first_use(rules: list[Rule]) -> dict[str, int]:
    first: dict[str, int] = {}
    for i, rule in enumerate(rules):
        first.setdefault(env_key(rule), i)
    return first


def _spec_key(spec: dict[str, Any] | None) -> str:
    return repr(sorted((spec or {}).items()))


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
        raise _Unavailable(cov.message)
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
                raise _Unavailable(f"{kind} data was not collected: {status} ({message})")
            bound[name] = data
            continue
        if "objects" not in spec:
            continue
        resource, group = split_resource(spec["objects"])
        ns = scope.namespace(spec.get("namespace"))
        cov = bundle.coverage(resource, group=group, namespace=ns)
        if not cov.ok and not spec.get("optional"):
            raise _Unavailable(cov.message)
        bound[name] = bundle.objects(
            resource,
            group=group,
            namespace=ns,
            labels=spec.get("labels"),
            fields=spec.get("fields"),
        )
    return bound


def _subject_bindings(rule: Rule, bundle: Bundle, subject: dict[str, Any] | None) -> dict[str, Any]:
    bound: dict[str, Any] = {}
    for name, spec in rule.bindings.items():
        if "logs" in spec:
            bound[name] = _log_lines(bundle, subject or {}, spec)
        elif "events_for" in spec:
            ns = (subject or {}).get("metadata", {}).get("namespace")
            cov = bundle.coverage("events", namespace=ns)
            if not cov.ok:
                raise _Unavailable(cov.message)
            bound[name] = bundle.events_for(subject or {})
        elif "exec" in spec:
            bound[name] = _exec_output(bundle, subject or {}, spec)
    return bound


def _exec_output(bundle: Bundle, pod: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    meta = pod.get("metadata", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    found = bundle.exec_outputs(ns, name, spec["check"])
    if not found:
        raise _Unavailable(
            f"check {spec['check']} was not run in {ns}/{name} (tf-collect --exec runs it)"
        )
    out = found[0]
    if out.status not in ("ok", "truncated"):
        raise _Unavailable(f"check {spec['check']} in {ns}/{name}: {out.status} ({out.message})")
    return {
        "text": out.text,
        "lines": out.text.splitlines(),
        "exit_code": out.exit_code,
        "container": out.container,
        "argv": list(out.argv),
    }


def _log_lines(bundle: Bundle, pod: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    meta = pod.get("metadata", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    present = [c.get("name") for c in (pod.get("spec") or {}).get("containers", [])]
    present += [c.get("name") for c in (pod.get("spec") or {}).get("initContainers", [])]
    wanted = [c for c in spec.get("containers", present) if c in present]
    prev = spec.get("previous", False)
    which = [True, False] if prev == "both" else [bool(prev)]
    tail = spec.get("tail")
    lines: list[str] = []
    for container in wanted:
        for previous in which:
            log = bundle.log(ns, name, container, previous, spec.get("grep"))
            if log is None:
                if previous:
                    continue  # never attempted: the container had not restarted
                raise _Unavailable(f"logs of {ns}/{name}/{container} were not collected")
            if not log.collected:
                raise _Unavailable(
                    f"logs of {ns}/{name}/{container}{' (previous)' if previous else ''}: "
                    f"{log.status} ({log.message})"
                )
            chunk = list(log.lines)
            lines.extend(chunk[-tail:] if tail else chunk)
    return lines


def _evaluate_one(rule: Rule, env: Env, subject: dict[str, Any] | None) -> Finding | None:
    fired = env.run(rule.when)
    if not isinstance(fired, bool):
        raise RuleEvalError(f"when: must be true or false, got {type(fired).__name__}")
    if not fired:
        return None
    evidence: list[str] = []
    for expr in rule.evidence:
        value = env.run(expr)
        items = value if isinstance(value, list) else [value]
        for item in items:
            text = str(item) if item is not None else ""
            if text and text not in evidence:  # the same line in current and previous logs
                evidence.append(text)
    values = {name: _plain(env.run(expr)) for name, expr in rule.vars.items()}
    meta = (subject or {}).get("metadata", {})
    context = {
        **values,
        "tf": env["tf"],
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
        objects=[ref(subject)] if subject else [],
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
