"""The report in its formats: JSON as it is, Markdown and HTML from Jinja2 templates over the
same dict (templates/), so the three never disagree."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import markupsafe

from k8s.printing import table_text
from tf_support_schemas.manual import load_manual

from ..i18n import STRINGS, VERSIONS, Strings
from ..results import SEVERITIES
from .markdown import fit_markdown, md_cell, md_code, md_fence, md_text
from .pictures import capacity_bars, timeline
from .views import LINKS

FORMATS = ("md", "html", "json")
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("analyzer.report", "templates"),
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
    js = resources.files("analyzer.report").joinpath("templates/report.js").read_text("utf-8")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    return js, markupsafe.Markup(f"'sha256-{digest}'")


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    strings = Strings(STRINGS[report["lang"]])
    versions = Strings(VERSIONS[report["lang"]])
    template = _ENV.get_template(f"report.{fmt}.j2")
    if fmt == "md":
        return fit_markdown(
            report,
            lambda model, trim: template.render(r=model, t=strings, ver=versions, trim=trim),
            cut_note=strings["trim_hard_cut"],
        )
    script, script_hash = _script()
    views = report["views"]
    return template.render(
        r=report,
        t=strings,
        ver=versions,
        sections=sections_of(report),
        capacity=capacity_bars(views["capacity"]) if views else [],
        timeline=timeline(views["warnings"]) if views else None,
        script=script,
        script_hash=script_hash,
    )
