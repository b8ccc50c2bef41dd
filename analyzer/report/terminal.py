"""The terminal summary: root causes first, then what was skipped or missing."""

from __future__ import annotations

from typing import Any

from ..i18n import STRINGS, Strings

MAX_CHAINS = 5
_MARK = {"critical": "!!", "error": "! ", "warning": "~ ", "info": "i "}


def summary_lines(report: dict[str, Any]) -> list[str]:
    t = Strings(STRINGS[report["lang"]])
    b, s = report["bundle"], report["summary"]
    lines = []
    if report["possible_secrets"]:
        lines.append("!! " + t["secrets_warning"])
        lines.extend(
            f"!!   {x['member']}: {x['kind']} x{x['count']}" for x in report["possible_secrets"]
        )
    lines += [
        f"{t['report_title']}: {b['source']}",
        f"  {t['collected']} {b['created_at']} · {t['cluster']} {b.get('server_version') or '?'}"
        f" · {t['tf']} {b.get('tf_version') or t['version_unknown']} ({b['tf_namespace']})",
        f"  {s['root_causes']} {t.plural(s['root_causes'], 'root_causes')}, "
        f"{s['consequences']} {t.plural(s['consequences'], 'consequences')}, "
        f"{s['notes']} {t.plural(s['notes'], 'notes')}; "
        + ", ".join(f"{n} {t[o]}" for o, n in s["rules"].items() if o in t),
    ]
    if not report["findings"]:
        lines.append("  " + t["no_findings"])
    for f in report["findings"]:
        indent = "  " if f["root_cause"] else "      -> "
        lines.append(f"{indent}{_MARK[f['severity']]} [{f['manual'][0]}] {f['title']}")
        if f["root_cause"]:
            lines.append(f"       {t['fix']}: {f['fix']}")
        if f.get("unchecked_causes"):
            lines.append(f"       {t['unchecked_causes']}: {', '.join(f['unchecked_causes'])}")
    broken = [
        c for c in (report["views"] or {}).get("discovery", []) if c["first_broken"] is not None
    ]
    for chain in broken[:MAX_CHAINS]:
        link = chain["links"][chain["first_broken"]]
        lines.append(
            f"  {t['discovery']}: {chain['node']}: {t['link_' + link['kind']]} "
            f"{t['reason_' + link['reason']]} ({link['facts']})"
        )
    if len(broken) > MAX_CHAINS:
        lines.append(f"  {t['discovery']}: " + t["more_nodes"] % (len(broken) - MAX_CHAINS))
    odd = [r for r in report["rules"] if r["outcome"] in ("skipped", "error")]
    for r in odd:
        lines.append(
            f"  ({t[r['outcome']] if r['outcome'] in t else r['outcome']}) {r['rule_id']}: "
            f"{r['reason']}"
        )
    if report["collection_gaps"]:
        lines.append(f"  {t['gaps']}: {len(report['collection_gaps'])}")
    return lines
