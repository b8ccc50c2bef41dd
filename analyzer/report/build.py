"""From an analysis to a report: one JSON-able dict that every format renders (render.py).

The dict holds data, not layout: the cluster views the pictures are drawn from (`views.py`)
are computed here from the bundle, so the JSON report carries them too. Its shape is
schemas/report.schema.json, which the tests hold every sample's report to.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from tf_support_schemas import artifact_summary
from tf_support_schemas.manual import load_manual

from .. import __version__
from ..bundle import Bundle
from ..i18n import missing_text, version_text
from ..results import OUTCOMES, ROLES, SEVERITIES, Analysis, Finding
from ..rules.loading import KNOWN_ISSUES
from ..running import Component, Running
from ..verdict import opt_in, unsure, verdict
from .comparison import compare
from .views import build_views


def build_report(
    analysis: Analysis,
    lang: str,
    *,
    bundle: Bundle | None = None,
    baseline: Analysis | None = None,
) -> dict[str, Any]:
    """The report of `analysis`; with the `bundle` it was made from, also the cluster views;
    with the analysis of an earlier `baseline` bundle, which findings were fixed, new, remain."""
    manual = load_manual()
    findings = [_finding(f, lang, manual) for f in analysis.findings()]
    by_sev = {s: 0 for s in SEVERITIES}
    by_role = {r: 0 for r in ROLES}
    for f in analysis.findings():
        by_sev[f.severity] += 1
        by_role[f.role] += 1
    rules_count = {o: 0 for o in OUTCOMES}
    for r in analysis.results:
        rules_count[r.outcome] += 1
    views = build_views(bundle, analysis.findings()) if bundle is not None else None
    report = {
        "report_version": 1,
        "tool": {"name": "tf-analyze", "version": __version__},
        "lang": lang,
        # The file name only: the same bundle gives the same report from any directory.
        "bundle": {
            **analysis.bundle,
            "source": PurePath(analysis.bundle["source"]).name,
            "warnings": analysis.warnings,
        },
        "summary": {
            "verdict": verdict(analysis),
            # Rules that could have found a problem but could not run, what they lacked, and
            # the tf-collect command that collects what every skipped rule needs.
            "unsure_rules": [r.rule_id for r in analysis.results if unsure(r)],
            "missing": sorted(
                {
                    missing_text(m, lang)
                    for r in analysis.results
                    if unsure(r)
                    for m, _ in r.gaps
                    if not opt_in(m)
                }
            ),
            "recollect": analysis.recollect,
            "root_causes": by_role["root_cause"],
            "notes": by_role["note"],
            "consequences": by_role["consequence"],
            "by_severity": by_sev,
            "rules": rules_count,
            "warning_events": views["warnings"]["total"] if views else 0,
        },
        "running": _running(analysis.running, lang) if analysis.running else None,
        "findings": findings,
        "known_issues": [
            {**k, "title": k["title"][lang], "line": k["line"][lang]} for k in analysis.known_issues
        ],
        "rules": [
            {
                "rule_id": r.rule_id,
                "manual": list(r.manual),
                "severity": r.severity,
                "section": r.section,
                "outcome": r.outcome,
                "reason": r.reason(lang),
            }
            for r in analysis.results
        ],
        "collection_gaps": [_gap(a) for a in analysis.collection_gaps],
        "absent": [_gap(a) for a in analysis.absent],
        "possible_secrets": analysis.possible_secrets,
        "views": views,
    }
    if baseline is not None:
        report["comparison"] = compare(analysis, baseline, lang)
    return report


def _finding(f: Finding, lang: str, manual: Any) -> dict[str, Any]:
    section = manual.sections.get(f.section)
    return {
        "id": f.id,
        "rule_id": f.rule_id,
        "manual": list(f.manual),
        "severity": f.severity,
        "section": f.section,
        "section_title": getattr(section, lang)
        if section
        else version_text("section", lang)
        if f.section == KNOWN_ISSUES
        else f.section,
        "objects": f.objects,
        "title": f.texts["title"][lang],
        "explanation": f.texts["explanation"][lang],
        "fix": f.texts["fix"][lang],
        "commands": f.commands,
        "evidence": f.evidence,
        "decisive": f.decisive,
        "role": f.role,
        # Kept for readers of the JSON: a finding shown on its own, a root cause or a note.
        "root_cause": f.role != "consequence",
        "caused_by": f.caused_by,
        "unchecked_causes": f.unchecked_causes,
        "consequences": [c.id for c in f.children],
    }


def _running(now: Running, lang: str) -> dict[str, Any]:
    """What runs, for the header: each component that any witness names, one line each, the
    Helm chart, and where witnesses disagree."""
    shown = [c for c in now.components.values() if c.readings]
    return {
        "components": [
            {
                "name": c.name,
                "version": c.version,
                "source": c.source,
                "text": component_text(c, lang),
                "readings": [vars(r) for r in c.readings],
            }
            for c in shown
        ],
        "chart": now.chart,
        "app_version": now.app_version,
        "chart_text": version_text("chart", lang, chart=now.chart, app_version=now.app_version)
        if now.chart
        else version_text("no_chart", lang),
        "notes": [version_text(n.kind, lang, **n.params) for n in now.notes],
    }


def component_text(c: Component, lang: str) -> str:
    """`operator 1.48.6 (start line)`, `greptimedb unknown (latest, pulled 2026-11-30, digest
    sha256:...)`, and where a start line names only a commit, which."""
    if c.version:
        text = version_text(
            "component", lang, name=c.name, version=c.version, source=version_text(c.source, lang)
        )
    elif c.floating:
        pulled = version_text("pulled", lang, date=c.pulled) if c.pulled else ""
        digest = version_text("digest", lang, digest=c.digest[:19]) if c.digest else ""
        text = version_text(
            "floating", lang, name=c.name, tag=c.floating, pulled=pulled, digest=digest
        )
    else:
        text = version_text("unknown", lang, name=c.name)
    if c.commit_only:
        kind = "commit_release" if c.release else "commit"
        text += version_text(kind, lang, commit=c.commit[:8], release=c.release)
    return text


def _gap(art: dict[str, Any]) -> dict[str, Any]:
    what = artifact_summary(art)
    return {
        "artifact": art["id"],
        "step": art.get("step", ""),
        "status": art["status"],
        "what": what,
        "message": art.get("message", ""),
    }
