"""From an analysis to a report: one JSON-able dict that every format renders.

The JSON report is this dict (schema-validated); Markdown and HTML are Jinja2 templates over
it, so the three never disagree.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jinja2

import tf_support_schemas as schemas

from . import __version__
from .i18n import STRINGS
from .manual import load_manual
from .results import OUTCOMES, SEVERITIES, Analysis, Finding

FORMATS = ("md", "html", "json")
GITHUB_BODY_LIMIT = 65_536


def build_report(analysis: Analysis, lang: str) -> dict[str, Any]:
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
    report = {
        "report_version": 1,
        "tool": {"name": "tf-analyze", "version": __version__},
        "lang": lang,
        "bundle": analysis.bundle,
        "summary": {
            "root_causes": len(analysis.roots),
            "consequences": sum(len(r.children) for r in analysis.roots),
            "by_severity": by_sev,
            "rules": rules_count,
        },
        "findings": findings,
        "rules": [
            {
                "rule_id": r.rule_id,
                "manual": list(r.manual),
                "severity": r.severity,
                "section": r.section,
                "outcome": r.outcome,
                "reason": r.reason,
            }
            for r in analysis.results
        ],
        "collection_gaps": [_gap(a) for a in analysis.collection_gaps],
        "possible_secrets": analysis.possible_secrets,
    }
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
    if art["type"] == "log":
        prev = " (previous)" if art.get("previous") else ""
        what = f"logs {art.get('namespace')}/{art.get('pod')}/{art.get('container')}{prev}"
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
    autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9-])")
_ISSUE_REF = re.compile(r"(?<![\w&])(#|GH-)(?=\d)")


def md_text(text: str) -> str:
    """Prose for GitHub: no @mentions, no #123 links, no raw HTML."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MENTION.sub("@\u200b", text)
    return _ISSUE_REF.sub(lambda m: m.group(1) + "\u200b", text)


def md_fence(lines: list[str], lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so nothing breaks out."""
    body = "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


_ENV.filters["md"] = md_text
_ENV.filters["fence"] = md_fence


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    strings = STRINGS[report["lang"]]
    template = _ENV.get_template(f"report.{fmt}.j2")
    text = template.render(r=report, t=strings, severities=SEVERITIES)
    if fmt == "md" and len(text) > GITHUB_BODY_LIMIT:
        text = _shrink_markdown(report, strings, template)
    return text


def _shrink_markdown(report: dict[str, Any], strings: dict[str, str], template: Any) -> str:
    """Drop evidence from the least important findings until the body fits GitHub's limit."""
    slim = json.loads(json.dumps(report))
    order = list(reversed(slim["findings"]))  # least important last in rank order
    for finding in order:
        if finding["evidence"]:
            finding["evidence"] = [strings["evidence_trimmed"]]
        text = template.render(r=slim, t=strings, severities=SEVERITIES)
        if len(text) <= GITHUB_BODY_LIMIT:
            return text
    slim["rules"] = [r for r in slim["rules"] if r["outcome"] != "passed"]
    slim["collection_gaps"] = slim["collection_gaps"][:50]
    return template.render(r=slim, t=strings, severities=SEVERITIES)[:GITHUB_BODY_LIMIT]
