"""Evaluating rules on a bundle. One failing rule never stops the others.

A rule sees only named data from the bundle reader: its subjects (`for_each`), the data bound
in `with`, its named expressions (`let`), and `tf` (see `tf_context`). Data that was not
collected makes the rule *skipped* with the reason, never *passed*.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import jinja2

from k8s.times import parse_time

from ..bundle import Bundle, ref
from ..i18n import LANGS, missing_text
from ..results import Analysis, Finding, RuleResult
from ..running import Running, running
from ..verdict import recollect_command
from .bindings import (
    PerSubject,
    RuleEvalError,
    Unavailable,
    Variables,
    run,
    shared_bindings,
    subjects,
)
from .known import cite, dress, note
from .loading import TEXT_FIELDS, Expr, Rule, default_rules_dir
from .ranking import give_way, rank
from .releases import ReleaseData, load_releases
from .subjects import place


def analyze(bundle: Bundle, rules: list[Rule], releases: ReleaseData | None = None) -> Analysis:
    releases = releases or load_releases(default_rules_dir())
    now = running(bundle, releases)
    tf = tf_context(bundle, now)
    results: list[RuleResult] = []
    notes: list[dict[str, Any]] = []
    for rule in rules:
        if rule.known is None:
            results.append(evaluate(rule, bundle, tf))
            continue
        citation = cite(rule.known, now, releases, tf)
        if citation.state == "clear":  # a version outside every affected range: silent
            results.append(_result(rule, "passed"))
            continue
        result = evaluate(rule, bundle, tf, citation.context())
        for finding in result.findings:
            dress(finding, rule.known, citation, tf)
        if citation.state == "affected" and not result.findings:
            notes.append({"rule_id": rule.id, **note(rule.known, citation)})
        results.append(result)
    depends = {rule.id: rule.depends_on for rule in rules}
    for finding in (f for r in results for f in r.findings):
        place(bundle, finding, depends[finding.rule_id])
    give_way(results, {rule.id: rule.yields_to for rule in rules if rule.yields_to})
    findings = [f for r in results for f in r.findings]
    return Analysis(
        bundle=summary(bundle),
        results=results,
        roots=rank(findings, [r for r in results if r.outcome == "error"]),
        collection_gaps=bundle.failed_artifacts(),
        absent=bundle.absent_artifacts(),
        possible_secrets=[vars(leak) for leak in bundle.possible_secrets()],
        warnings=list(bundle.manifest.get("warnings") or []),
        recollect=recollect_command(bundle.manifest, results),
        running=now,
        known_issues=notes,
    )


def _result(rule: Rule, outcome: str) -> RuleResult:
    return RuleResult(rule.id, rule.manual, rule.severity, rule.section, outcome)


# How far back "recently" reaches when tf-collect was given no --since: a container that
# failed and restarted within the day before collection is a problem today.
RECENT = timedelta(days=1)


def tf_context(bundle: Bundle, now: Running) -> dict[str, Any]:
    """What every rule reads as `tf`: where TensorFusion runs, the operator version that runs
    (analyzer/running.py; "" unknown) and each component's (`versions`), whether it is
    installed, the version of the chart its Helm release was installed from ("" when the
    bundle holds no Helm release), so a fix's `helm upgrade` can keep that chart, and when the
    collection window starts (`window_start`)."""
    found = bundle.manifest["tensorfusion"]
    return {
        "namespace": bundle.tf_namespace,
        "release": found["release"],
        "version": now.components["operator"].version,
        "versions": {name: c.version for name, c in now.components.items()},
        "installed": found.get("installed"),
        "chart_version": now.chart,
        "window_start": window_start(bundle.manifest),
    }


def window_start(manifest: dict[str, Any]) -> str:
    """The start of the collection window as Kubernetes writes times (RFC 3339, UTC, seconds),
    so rules compare it with a status's timestamps as strings: --since before the bundle was
    made, else RECENT. "" (before every time) when the bundle's time cannot be read."""
    created = parse_time(manifest.get("created_at"))
    if created is None:
        return ""
    since = (manifest.get("time_window") or {}).get("since_seconds")
    start = created - (timedelta(seconds=since) if since else RECENT)
    return start.strftime("%Y-%m-%dT%H:%M:%SZ")


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
    rule: Rule, bundle: Bundle, tf: dict[str, Any], known: dict[str, Any] | None = None
) -> RuleResult:
    """One rule on the bundle; `known`: what a known bug's texts read (Citation.context)."""
    result = _result(rule, "passed")
    try:
        shared = shared_bindings(rule, bundle)
        objects = subjects(rule, bundle)
    except Unavailable as exc:
        result.outcome, result.gaps = "skipped", [(exc.missing, "")]
        return result
    # The expressions read the bundle's objects in place: nothing is converted or copied.
    base = {"tf": tf, **{k: v for k, v in shared.items() if k not in rule.where}}
    per_subject = PerSubject(rule, bundle, shared)
    by_id: dict[str, Finding] = {}
    for subject in objects:
        variables = per_subject.variables(base, subject)
        if rule.subject:
            variables[rule.subject] = subject
        try:
            fired = run(rule.when, variables)
            if fired is not True and fired is not False:
                raise RuleEvalError(f"when: must be true or false, got {type(fired).__name__}")
            finding = _finding(rule, variables, subject, known) if fired else None
        except Unavailable as exc:
            result.gaps.append((exc.missing, exc.where_for(subject)))
            continue
        except RuleEvalError as exc:
            result.errors.append(f"{ref(subject) if subject else '(bundle)'}: {exc}")
            continue
        if finding is None:
            continue
        same = by_id.get(finding.id)
        if same is None:
            by_id[finding.id] = finding
            result.findings.append(finding)
        else:  # another Event about the same object: one finding, with both's evidence
            same.evidence += [e for e in finding.evidence if e not in same.evidence]
    if result.findings:
        result.outcome = "fired"
    elif result.errors:
        result.outcome = "error"
    elif result.gaps:
        result.outcome = "skipped"
    return result


def _finding_ref(subject: dict[str, Any]) -> str:
    """What a finding is about: the object itself, or for an Event the object it is about
    (an Event's name changes with every occurrence; comparing bundles needs the same ref)."""
    involved = subject.get("involvedObject") if subject.get("kind") == "Event" else None
    if isinstance(involved, dict) and involved.get("kind") and involved.get("name"):
        return ref({"kind": involved["kind"], "metadata": involved})
    return ref(subject)


def _run_or_missing(
    expr: Expr, variables: Variables, missing: list[str], default: Any = None
) -> Any:
    try:
        return run(expr, variables)
    except Unavailable as exc:
        where = exc.where_for(variables.subject)
        text = missing_text(exc.missing)
        missing.append(f"(not collected: {text}{': ' + where if where else ''})")
        return default
    except RuleEvalError as exc:
        # The rule's condition held: a value it could not show must not lose the finding.
        missing.append(f"(could not be shown: {exc})")
        return default


def _finding(
    rule: Rule,
    variables: Variables,
    subject: dict[str, Any] | None,
    known: dict[str, Any] | None = None,
) -> Finding:
    """What a rule that fired on `subject` found. Data missing for its evidence or texts, or
    an expression of theirs that failed, is said in the evidence, and never loses the finding."""
    missing: list[str] = []
    evidence: list[str] = []
    for expr in rule.evidence:
        value = _run_or_missing(expr, variables, missing)
        for item in value if isinstance(value, list) else [value]:
            text = str(item) if item is not None else ""
            if text and text not in evidence:  # the same line in current and previous logs
                evidence.append(text)
    values = {
        name: _plain(_run_or_missing(expr, variables, missing, ""))
        for name, expr in rule.vars.items()
    }
    decisive = _first_line(
        _run_or_missing(rule.decisive, variables, missing) if rule.decisive else evidence
    )
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
    if known is not None:
        context["known"] = known
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
        decisive=decisive,
        generic=rule.generic,
    )


def _first_line(value: Any) -> str:
    """The first non-empty string of a value that is a string or a list of them."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item:
            return item
    return ""


def _plain(value: Any) -> Any:
    """CEL results as plain JSON-able Python values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
