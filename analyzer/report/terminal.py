"""The terminal report: the verdict first, root causes with their fixes, the comparison with a
baseline, then what could not be checked (skipped rules folded into one line unless verbose),
and a legend for the marks. Colour only where the reader's terminal wants it."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from typing import Any, TextIO

from ..i18n import STRINGS, VERSIONS, Strings

WIDTH = 100  # the terminal's width when the caller does not know it
MAX_CHAINS = 5
MAX_MISSING = 5
COLOR_CHOICES = ("auto", "always", "never")
_MARK = {"critical": "!!", "error": "! ", "warning": "~ ", "info": "i "}
_SGR = {
    "critical": "1;31",
    "error": "31",
    "warning": "33",
    "info": "36",
    "problems": "1;31",
    "inconclusive": "1;33",
    "no-problem": "1;32",
    "dim": "2",
}


def use_color(choice: str, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """`always`/`never` as asked; `auto`: a terminal that is not dumb, unless NO_COLOR is set
    (no-color.org: any non-empty value)."""
    if choice != "auto":
        return choice == "always"
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return stream.isatty()


class Paint:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if self.on else text


def summary_lines(
    report: dict[str, Any], *, verbose: bool = False, color: bool = False, width: int = WIDTH
) -> list[str]:
    """The whole terminal report, the evidence line under each root cause cut to `width`."""
    t, paint = Strings(STRINGS[report["lang"]]), Paint(color)
    b, s = report["bundle"], report["summary"]
    lines = _secrets(report, t, paint)
    lines += [
        f"{t['report_title']}: {b['source']}",
        *verdict_lines(report, paint),
        f"  {t['collected']} {b['created_at']} · {t['cluster']} {b.get('server_version') or '?'}"
        f" · {t['tf']} {_tf_line(report, t)} ({b['tf_namespace']})",
        *_running(report),
        f"  {s['root_causes']} {t.plural(s['root_causes'], 'root_causes')}, "
        f"{s['consequences']} {t.plural(s['consequences'], 'consequences')}, "
        f"{s['notes']} {t.plural(s['notes'], 'notes')}; "
        + ", ".join(f"{n} {t[o]}" for o, n in s["rules"].items() if o in t),
    ]
    for f in report["findings"]:
        lines += _finding(f, t, paint, width)
    lines += _known_issues(report, verbose)
    lines += _discovery(report, t)
    lines += _comparison(report, t, paint, verbose)
    lines += _not_checked(report, t, verbose)
    if report["collection_gaps"]:
        lines.append(f"  {t['gaps']}: {len(report['collection_gaps'])}")
    if report["findings"]:
        lines.append(paint(_legend(t), "dim"))
    return lines


def _tf_line(report: dict[str, Any], t: Strings) -> str:
    running = report.get("running")
    if running:
        return running["chart_text"]
    return report["bundle"].get("tf_version") or t["version_unknown"]


def _running(report: dict[str, Any]) -> list[str]:
    """What runs, one line, and each disagreement between its witnesses."""
    running = report.get("running")
    if not running or not running["components"]:
        return []
    v = VERSIONS[report["lang"]]
    texts = [c["text"] for c in running["components"]]
    return [f"  {v['running']}: " + " · ".join(texts), *(f"  ! {n}" for n in running["notes"])]


def _known_issues(report: dict[str, Any], verbose: bool) -> list[str]:
    """Known bugs of the running version without their signal: counted; listed with -v."""
    found = report.get("known_issues") or []
    if not found:
        return []
    v = VERSIONS[report["lang"]]
    lines = [f"  {v['known_issues']}: {len(found)}" + ("" if verbose else " (-v)")]
    if verbose:
        for k in found:
            lines.append(f"    - {k['title']}: {k['line']}")
            if k["command"]:
                lines.append(f"      {k['command']}")
    return lines


def brief_lines(
    report: dict[str, Any], *, color: bool = False, roots: int = 5, width: int = WIDTH
) -> list[str]:
    """At most one screen: the verdict and the first root causes with the evidence line that
    decided each and their fixes."""
    t, paint = Strings(STRINGS[report["lang"]]), Paint(color)
    lines = _secrets(report, t, paint) + verdict_lines(report, paint, warnings=False)
    shown = [f for f in report["findings"] if f["role"] != "consequence"]
    for f in shown[:roots]:
        lines += _finding(f, t, paint, width)
    if len(shown) > roots:
        lines.append("  " + t["and_more"] % (len(shown) - roots))
    return lines


def verdict_lines(report: dict[str, Any], paint: Paint, *, warnings: bool = True) -> list[str]:
    """The verdict, and for an inconclusive one what is missing and how to collect it; then
    what tf-collect warned about (`warnings`: tf-collect itself has just printed them)."""
    t = Strings(STRINGS[report["lang"]])
    s = report["summary"]
    verdict = s["verdict"]
    head = f"{t['verdict']}: {t['verdict_' + verdict]}"
    if verdict == "problems":
        head += f" ({s['root_causes']} {t.plural(s['root_causes'], 'root_causes')})"
    lines = ["  " + paint(head, verdict)]
    if verdict == "no-problem":
        lines.append("  " + t["no_problem_hint"])
    if verdict == "inconclusive":
        lines.append("  " + t["inconclusive_why"] % len(s["unsure_rules"]))
        missing = s["missing"]
        for m in missing[:MAX_MISSING]:
            lines.append(f"    {t['missing']}: {m}")
        if len(missing) > MAX_MISSING:
            lines.append("    " + t["and_more"] % (len(missing) - MAX_MISSING))
        if s["recollect"]:
            lines.append(f"  {t['recollect']}: {s['recollect']}")
    shown = (report["bundle"].get("warnings") or []) if warnings else []
    for warning in shown:
        lines.append(f"  {t['collect_warned']}: {warning}")
    return lines


def _secrets(report: dict[str, Any], t: Strings, paint: Paint) -> list[str]:
    if not report["possible_secrets"]:
        return []
    lines = [paint("!! " + t["secrets_warning"], "critical")]
    lines += [f"!!   {x['member']}: {x['kind']} x{x['count']}" for x in report["possible_secrets"]]
    return lines


def _finding(f: dict[str, Any], t: Strings, paint: Paint, width: int) -> list[str]:
    alone = f["role"] != "consequence"  # a root cause or a note, with its fix
    indent = "  " if alone else "      -> "
    mark = paint(_MARK[f["severity"]], f["severity"])
    lines = [f"{indent}{mark} [{(f['manual'] or [f['rule_id']])[0]}] {f['title']}"]
    if alone:
        if f["decisive"]:
            lines.append(fit(f"       {t['decided_by']}: {f['decisive']}", width))
        lines.append(f"       {t['fix']}: {f['fix']}")
    if f.get("unchecked_causes"):
        lines.append(f"       {t['unchecked_causes']}: {', '.join(f['unchecked_causes'])}")
    return lines


def fit(line: str, width: int) -> str:
    """`line` cut to `width` terminal columns (East Asian wide characters take two), ending in
    an ellipsis where it was cut; a line break ends it."""
    first, _, rest = line.partition("\n")
    cols = [2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in first]
    if sum(cols) <= width and not rest:
        return first
    used = 0
    for i, c in enumerate(cols):
        if used + c > width - 1:
            return first[:i].rstrip() + "…"
        used += c
    return first + "…"


def _discovery(report: dict[str, Any], t: Strings) -> list[str]:
    chains = (report["views"] or {}).get("discovery", [])
    broken = [c for c in chains if c["first_broken"] is not None]
    lines = []
    for chain in broken[:MAX_CHAINS]:
        link = chain["links"][chain["first_broken"]]
        # A finding may blame a link whose facts look fine: then there is no reason to name.
        reason = f"{t['reason_' + link['reason']]} " if link["reason"] else ""
        lines.append(
            f"  {t['discovery']}: {chain['node']}: {t['link_' + link['kind']]} "
            f"{reason}({link['facts']})"
        )
    if len(broken) > MAX_CHAINS:
        lines.append(f"  {t['discovery']}: " + t["more_nodes"] % (len(broken) - MAX_CHAINS))
    return lines


def _comparison(report: dict[str, Any], t: Strings, paint: Paint, verbose: bool) -> list[str]:
    c = report.get("comparison")
    if c is None:
        return []
    counts = (len(c["fixed"]), len(c["new"]), len(c["remaining"]))
    lines = [
        f"  {t['cmp_title']} ({c['baseline']['source']}, {c['baseline']['created_at']}): "
        + t["cmp_short"] % counts
    ]
    for key, label in (("fixed", "cmp_fixed"), ("new", "cmp_new"), ("remaining", "cmp_remaining")):
        if key == "remaining" and not verbose:
            continue  # the findings above are the remaining ones
        if c[key]:
            lines.append(f"    {t[label]}:")
        for e in c[key]:
            mark = paint(_MARK[e["severity"]], e["severity"])
            lines.append(f"      {mark} {e['title']}")
    return lines


def _not_checked(report: dict[str, Any], t: Strings, verbose: bool) -> list[str]:
    """Rules in error always (they may hide a cause); skipped ones folded unless verbose."""
    lines = []
    skipped = [r for r in report["rules"] if r["outcome"] == "skipped"]
    for r in report["rules"]:
        if r["outcome"] == "error" or (verbose and r["outcome"] == "skipped"):
            lines.append(f"  ({t[r['outcome']]}) {r['rule_id']}: {r['reason']}")
    count = len(skipped)
    if skipped and not verbose:
        lines.append("  " + t.plural(count, "skipped_fold") % count)
    recollect = report["summary"]["recollect"]
    if skipped and recollect and report["summary"]["verdict"] != "inconclusive":
        lines.append(f"  {t['recollect_skipped']}: {recollect}")
    return lines


def _legend(t: Strings) -> str:
    marks = "  ".join(f"{_MARK[s].strip()} {t[s]}" for s in _MARK)
    return f"  {t['legend']}: {marks}  -> {t['legend_consequence']}"
