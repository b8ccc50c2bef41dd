"""From an analysis to a report: one JSON-able dict that every format renders.

The JSON report is this dict (schema-validated); Markdown and HTML are Jinja2 templates over
it, so the three never disagree. The dict holds data, not layout: the cluster views the
pictures are drawn from (`views.py`) are computed here from the bundle, so JSON carries them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import PurePath
from typing import Any

import jinja2
import markupsafe
import orjson

import tf_support_schemas as schemas

from . import __version__
from .bundle import Bundle
from .comparison import compare
from .i18n import STRINGS, Strings
from .manual import load_manual
from .markdown import fit_markdown, md_cell, md_code, md_fence, md_text
from .pictures import capacity_bars, timeline
from .printing import table_text
from .results import OUTCOMES, SEVERITIES, Analysis, Finding
from .views import LINKS, build_views

FORMATS = ("md", "html", "json")


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
    findings = []
    for root in analysis.roots:
        findings.append(_finding(root, lang, manual, root=True))
        findings.extend(_finding(child, lang, manual, root=False) for child in root.children)
    by_sev = {s: 0 for s in SEVERITIES}
    for f in analysis.findings():
        by_sev[f.severity] += 1
    rules_count = {o: 0 for o in OUTCOMES}
    for r in analysis.results:
        rules_count[r.outcome] += 1
    views = build_views(bundle) if bundle is not None else None
    report = {
        "report_version": 1,
        "tool": {"name": "tf-analyze", "version": __version__},
        "lang": lang,
        # The file name only: the same bundle gives the same report from any directory.
        "bundle": {**analysis.bundle, "source": PurePath(analysis.bundle["source"]).name},
        "summary": {
            # An info finding (expected or ignorable behaviour) is a note, not a root cause.
            "root_causes": sum(1 for r in analysis.roots if r.severity != "info"),
            "notes": sum(1 for r in analysis.roots if r.severity == "info"),
            "consequences": sum(len(r.children) for r in analysis.roots),
            "by_severity": by_sev,
            "rules": rules_count,
            "warning_events": views["warnings"]["total"] if views else 0,
        },
        "findings": findings,
        "rules": [
            {
                "rule_id": r.rule_id,
                "manual": list(r.manual),
                "severity": r.severity,
                "section": r.section,
                "outcome": r.outcome,
                "reason": (r.reason_zh or r.reason) if lang == "zh" else r.reason,
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
    problems = schemas.errors("report", report)
    if problems:  # a bug in this module, not in the bundle
        raise AssertionError("report does not match its schema: " + "; ".join(problems[:3]))
    return report


def _finding(f: Finding, lang: str, manual: Any, *, root: bool) -> dict[str, Any]:
    section = manual.sections.get(f.section)
    return {
        "id": f.id,
        "rule_id": f.rule_id,
        "manual": list(f.manual),
        "severity": f.severity,
        "section": f.section,
        "section_title": getattr(section, lang) if section else f.section,
        "objects": f.objects,
        "title": f.texts["title"][lang],
        "explanation": f.texts["explanation"][lang],
        "fix": f.texts["fix"][lang],
        "commands": f.commands,
        "evidence": f.evidence,
        "root_cause": root,
        "caused_by": f.caused_by,
        "consequences": [c.id for c in f.children],
    }


def _gap(art: dict[str, Any]) -> dict[str, Any]:
    kind = art["type"]
    if kind == "log":
        prev = " (previous)" if art.get("previous") else ""
        what = f"logs {art.get('namespace')}/{art.get('pod')}/{art.get('container')}{prev}"
    elif kind == "exec":
        what = f"exec {art.get('check', '')} in {art.get('namespace')}/{art.get('pod')}"
    elif kind in ("helm", "metrics") or not art.get("resource"):
        what = str(art["id"])  # helm:<release>, metrics:<...>
    else:
        where = f" in {art['namespace']}" if art.get("namespace") else ""
        sel = f" -l {art['label_selector']}" if art.get("label_selector") else ""
        group = f".{art['group']}" if art.get("group") else ""
        what = f"{art.get('resource')}{group}{where}{sel}"
    return {
        "artifact": art["id"],
        "step": art.get("step", ""),
        "status": art["status"],
        "what": what,
        "message": art.get("message", ""),
    }


# ---------------------------------------------------------------------- rendering
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("analyzer", "templates"),
    # Names end in .j2: "html" alone would match no template and escape nothing.
    autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def kubectl_output(view: dict[str, Any]) -> str:
    """What the terminal showed for one baseline command: tables, then standard error."""
    parts = ["\n\n".join(table_text(t) for t in view["tables"])] if view["tables"] else []
    parts += view["stderr"]
    return "\n".join(parts)


def human_bytes(n: float | None) -> str:
    if n is None:
        return "?"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n:.0f} B"


def human_number(n: float | None) -> str:
    if n is None:
        return "?"
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.2f}".rstrip("0").rstrip(".")


def sections_of(report: dict[str, Any]) -> list[dict[str, str]]:
    """The manual sections the findings fall in, in the manual's order."""
    manual = load_manual()
    titles = {f["section"]: f["section_title"] for f in report["findings"]}
    return [
        {"key": k, "title": titles[k]}
        for k in sorted(titles, key=lambda k: (manual.section_order(k), k))
    ]


_ENV.filters.update(
    md=md_text,
    fence=md_fence,
    code=md_code,
    cell=md_cell,
    kubectl=kubectl_output,
    bytes=human_bytes,
    num=human_number,
)
_ENV.globals.update(severities=SEVERITIES, links=LINKS)


@cache
def _script() -> tuple[str, markupsafe.Markup]:
    """The HTML report's one script and its CSP hash: no other script can run."""
    js = resources.files("analyzer").joinpath("templates/report.js").read_text("utf-8")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    return js, markupsafe.Markup(f"'sha256-{digest}'")


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        # The standard library's layout (2 spaces, sorted keys, UTF-8), in a tenth of the time.
        try:
            text = orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
            return text.decode() + "\n"
        except TypeError:  # what orjson cannot write (an integer beyond 64 bits, say)
            return json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    strings = Strings(STRINGS[report["lang"]])
    template = _ENV.get_template(f"report.{fmt}.j2")
    if fmt == "md":
        return fit_markdown(
            report,
            lambda model, trim: template.render(r=model, t=strings, trim=trim),
            cut_note=strings["trim_hard_cut"],
        )
    script, script_hash = _script()
    views = report["views"]
    return template.render(
        r=report,
        t=strings,
        sections=sections_of(report),
        capacity=capacity_bars(views["capacity"]) if views else [],
        timeline=timeline(views["warnings"]) if views else None,
        script=script,
        script_hash=script_hash,
    )
