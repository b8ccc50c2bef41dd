"""Markdown for a GitHub issue: safe to paste, and within GitHub's body limit on any bundle.

Safe: prose is HTML-escaped with `@mentions` and `#123` / `GH-123` / `owner/repo#123`
references broken by a zero-width space, so pasting a report pings nobody and links nothing;
code (evidence, commands, kubectl output) sits in fences longer than any backtick run inside,
so no log line can close its fence and be read as Markdown or HTML.

Within the limit: when the full report is longer than GitHub accepts, `fit_markdown` trims in
steps, least important first: long evidence and tables are cut, then the evidence of the
lowest-ranked findings goes, then the kubectl views, then the details of consequences and of
root causes. Each step leaves a visible note; the root causes and their fixes always stay.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from ..results import severity_rank

GITHUB_BODY_LIMIT = 65_536
EVIDENCE_LINES = 40
LINE_CHARS = 400
TEXT_CHARS = 2000
VIEW_ROWS = 50
FEW_VIEW_ROWS = 10
LIST_ROWS = 50
FEW_LIST_ROWS = 10
SUMMARY_CHARS = 300

_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_ISSUE_REF = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)
_NEWLINES = re.compile(r"[\r\n]+")

Render = Callable[[dict[str, Any], dict[str, Any]], str]


def md_text(text: Any) -> str:
    """Prose for GitHub: one line, no raw HTML, no @mentions, no #123 links."""
    text = _NEWLINES.sub(" ", str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MENTION.sub("@\u200b", text)
    return _ISSUE_REF.sub(lambda m: m.group(1) + "\u200b", text)


def md_fence(lines: list[str] | str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so nothing breaks out."""
    body = lines if isinstance(lines, str) else "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def md_code(text: Any) -> str:
    """An inline code span that holds any text: one line, delimiters longer than any run."""
    body = _NEWLINES.sub(" ", str(text))
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{tick}{pad}{body}{pad}{tick}"


def md_cell(text: Any) -> str:
    """Text for a table cell (already escaped prose or a code span): pipes escaped."""
    return str(text).replace("|", "\\|")


def body_length(text: str) -> int:
    """Length as GitHub counts it (UTF-16 code units, the conservative reading)."""
    return len(text.encode("utf-16-le")) // 2


def _fits(text: str) -> bool:
    return body_length(text) <= GITHUB_BODY_LIMIT


# ---------------------------------------------------------------------- the render model
def model_of(report: dict[str, Any]) -> dict[str, Any]:
    """The report plus the per-item trimming marks the Markdown template reads."""
    model = copy.deepcopy(report)
    for f in model["findings"]:
        f.update(evidence_cut=0, evidence_dropped=False, compact=False)
    for view in (model["views"] or {}).get("kubectl", []):
        for table in view["tables"]:
            table["rows_cut"] = 0
    model["root_groups"] = []
    model["cut"] = {"discovery": 0, "gaps": 0, "absent": 0, "skipped": 0, "secrets": 0}
    return model


def new_trim() -> dict[str, Any]:
    return {
        "trimmed": False,
        "evidence_lines": 0,
        "evidence_dropped": 0,
        "view_rows": 0,
        "views_dropped": False,
        "list_rows": 0,
        "compact": 0,
        "details_dropped": False,
        "grouped": 0,
    }


def fit_markdown(report: dict[str, Any], render: Render, *, cut_note: str) -> str:
    model, trim = model_of(report), new_trim()
    text = render(model, trim)
    if _fits(text):
        return text
    trim["trimmed"] = True
    for step in _STEPS:
        text = step(model, trim, render)
        if _fits(text):
            return text
    return _hard_cut(text, cut_note)


# ---------------------------------------------------------------------- the steps
def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit})"


def _cap_lengths(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    """Long evidence, long lines, long tables: keep the head of each."""
    for f in model["findings"]:
        for key in ("title", "explanation", "fix"):
            f[key] = _cut(f[key], TEXT_CHARS)
        f["commands"] = [_cut(c, TEXT_CHARS) for c in f["commands"]]
        if len(f["evidence"]) > EVIDENCE_LINES:
            f["evidence_cut"] = len(f["evidence"]) - EVIDENCE_LINES
            trim["evidence_lines"] += f["evidence_cut"]
            f["evidence"] = f["evidence"][:EVIDENCE_LINES]
        f["evidence"] = [_cut(line, LINE_CHARS) for line in f["evidence"]]
    _cap_views(model, trim, VIEW_ROWS)
    _cap_lists(model, trim, LIST_ROWS)
    return render(model, trim)


def _trim_order(findings: list[dict[str, Any]]) -> list[int]:
    """Indices of findings, least important first: consequences before root causes, then
    the less severe, then the later in rank order."""
    ranked = sorted(
        range(len(findings)),
        key=lambda i: (
            findings[i]["role"] == "consequence",
            severity_rank(findings[i]["severity"]),
            i,
        ),
    )
    return list(reversed(ranked))


def _drop_evidence(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    """Drop the evidence of the fewest, least important findings that make the body fit."""
    findings = model["findings"]
    order = [i for i in _trim_order(findings) if findings[i]["evidence"]]

    def apply(k: int) -> str:
        for n, i in enumerate(order):
            findings[i]["evidence_dropped"] = n < k
        trim["evidence_dropped"] = k
        return render(model, trim)

    text = apply(len(order))
    if not order or not _fits(text):
        return text
    lo, hi = 1, len(order)  # apply(hi) fits; find the smallest k that does
    while lo < hi:
        mid = (lo + hi) // 2
        if _fits(apply(mid)):
            hi = mid
        else:
            lo = mid + 1
    return apply(lo)


def _cap_views(model: dict[str, Any], trim: dict[str, Any], rows: int) -> None:
    views = model["views"]
    if not views:
        return
    for view in views["kubectl"]:
        for table in view["tables"]:
            extra = len(table["rows"]) - rows
            if extra > 0:
                table["rows"] = table["rows"][:rows]
                table["rows_cut"] += extra
                trim["view_rows"] += extra
    extra = len(views["discovery"]) - rows
    if extra > 0:
        views["discovery"] = views["discovery"][:rows]
        model["cut"]["discovery"] += extra
        trim["view_rows"] += extra


def _cap_lists(model: dict[str, Any], trim: dict[str, Any], rows: int) -> None:
    odd = [r for r in model["rules"] if r["outcome"] not in ("fired", "passed")]
    extra = len(odd) - rows
    if extra > 0:
        drop = {id(r) for r in odd[rows:]}
        model["rules"] = [r for r in model["rules"] if id(r) not in drop]
        model["cut"]["skipped"] += extra
        trim["list_rows"] += extra
    for r in model["rules"]:
        r["reason"] = _cut(r["reason"], LINE_CHARS)
    for key, cut in (
        ("collection_gaps", "gaps"),
        ("absent", "absent"),
        ("possible_secrets", "secrets"),
    ):
        extra = len(model[key]) - rows
        if extra > 0:
            model[key] = model[key][:rows]
            model["cut"][cut] += extra
            trim["list_rows"] += extra
    for g in (*model["collection_gaps"], *model["absent"]):
        g["message"] = _cut(g["message"], LINE_CHARS)


def _fewer_rows(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    _cap_views(model, trim, FEW_VIEW_ROWS)
    _cap_lists(model, trim, FEW_LIST_ROWS)
    return render(model, trim)


def _drop_views(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    if model["views"]:
        trim["views_dropped"] = True
    return render(model, trim)


def _compact(model: dict[str, Any], trim: dict[str, Any], render: Render, roots: bool) -> str:
    for f in model["findings"]:
        if (f["role"] != "consequence") == roots and not f["compact"]:
            f["compact"] = True
            trim["compact"] += 1
    return render(model, trim)


def _compact_consequences(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    return _compact(model, trim, render, roots=False)


def _compact_roots(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    return _compact(model, trim, render, roots=True)


def _drop_details(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    """Only the summary stays: every root cause with its fix."""
    trim["details_dropped"] = True
    for f in model["findings"]:
        f["title"] = _cut(f["title"], SUMMARY_CHARS)
        f["fix"] = _cut(f["fix"], SUMMARY_CHARS)
    return render(model, trim)


def _group_roots(model: dict[str, Any], trim: dict[str, Any], render: Render) -> str:
    """Root causes of one rule on many objects become one line with the count."""
    groups: dict[str, dict[str, Any]] = {}
    for f in model["findings"]:
        if f["role"] == "consequence":
            continue
        g = groups.get(f["rule_id"])
        if g is None:
            groups[f["rule_id"]] = {**f, "count": 1, "more_objects": []}
        else:
            g["count"] += 1
            g["more_objects"].extend(f["objects"])
    model["root_groups"] = list(groups.values())
    for g in model["root_groups"]:
        g["more_objects"] = g["more_objects"][:5]
    trim["grouped"] = sum(g["count"] - 1 for g in model["root_groups"])
    return render(model, trim)


def _hard_cut(text: str, cut_note: str) -> str:
    """The last resort (a body that is long even as one line per rule): cut between lines."""
    note = f"\n\n{cut_note}\n"
    room = GITHUB_BODY_LIMIT - body_length(note)
    head = text[:room]
    while body_length(head) > room:
        head = head[: len(head) - (body_length(head) - room)]
    return head[: head.rfind("\n") + 1 or len(head)] + note


_STEPS = (
    _cap_lengths,
    _drop_evidence,
    _fewer_rows,
    _drop_views,
    _compact_consequences,
    _compact_roots,
    _drop_details,
    _group_roots,
)
