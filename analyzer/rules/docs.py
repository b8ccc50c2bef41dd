"""The rule reference (docs/rules.md), rendered from the rule files, never kept by hand.

`render(rules)` is pure and byte-stable: sections in the manual's order (docs/manual/rows.yaml),
rules by manual row then id, no timestamps. `scripts/make_rules_doc.py` writes the file and a
test checks that the committed copy is current.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tf_support_schemas.manual import Manual, load_manual

from .known import range_text
from .loading import Rule

SCRIPT = "python scripts/make_rules_doc.py"
COLUMNS = (
    "Rule",
    "Manual row",
    "Severity",
    "Title (en, zh)",
    "Looks at",
    "Consequence of",
    "Scenarios",
)

_INTRO = """\
# Rule reference

<!-- Generated from rules/ by `{script}`: do not edit by hand. -->

Every rule `tf-analyze` applies: {rules} rules for {rows} rows of the troubleshooting manual
([troubleshooting.zh.md](manual/troubleshooting.zh.md)), grouped by the manual's sections in
its order, then {known} known TensorFusion bugs. After changing a rule, run `{script}`.

- **Rule**: the rule's id, linked to its file in `rules/`.
- **Manual row**: the key(s) in [rows.yaml](manual/rows.yaml) the rule implements; the reports
  and the JSON carry them on every finding.
- **Title**: as written in the rule, English then Chinese; `{{{{ … }}}}` is filled in from the
  finding.
- **Looks at**: the bundle data the rule is given. *each* means one finding per matching object;
  a rule whose data was not collected is reported as skipped, never as passed (unless the data
  is marked optional).
- **Consequence of**: the manual rows or sections (`consequence_of`) whose findings, when present
  in the same bundle, are reported as this finding's root cause, with this finding under them.
  *Generic* (`generic: true`): the rule also yields to any specific finding about what its
  finding is about or depends on (the same pod, the node and GPUs a workload runs on, the
  components it `depends_on`), which heads it.
- **Scenarios**: the sample scenarios in `sample_bundles/` where the rule must fire, and the near
  misses where it must run and stay silent (`scenarios:` in the rule; a test holds both).
"""

KNOWN_COLUMNS = (
    "Rule",
    "Version of",
    "Affected",
    "Fixed by",
    "Severity",
    "Title (en, zh)",
    "Signal looks at",
    "Explains",
    "Scenarios",
)
_KNOWN_INTRO = """\
## Known TensorFusion bugs (TensorFusion 已知缺陷)

Defects of TensorFusion releases, each tied to the commit that fixed it (`rules/known-issues/`).
The version that decides is the operator's that runs (its start line, then its image, then
Helm) or, for a defect of the chart's templates and defaults, the Helm chart's. Ranges are
half-open per release line. In range with the signal: a finding that names the bug, the release
that fixes it and a pinned `helm upgrade`, heading the rows it **explains**; in range without
the signal: listed under "Known issues of this version"; outside every range: silent.
"""


def render(rules: Iterable[Rule], *, manual: Manual | None = None) -> str:
    """docs/rules.md for `rules`: a table per manual section."""
    manual = manual or load_manual()
    rules = list(rules)
    row_order = {key: i for i, key in enumerate(manual.rows)}
    by_section: dict[str, list[Rule]] = {}
    for rule in rules:
        by_section.setdefault(rule.section, []).append(rule)
    known = sorted((r for r in rules if r.known is not None), key=lambda r: r.id)
    out = [
        _INTRO.format(
            script=SCRIPT, rules=len(rules) - len(known), rows=len(manual.rows), known=len(known)
        )
    ]
    for key, section in manual.sections.items():
        members = sorted(
            by_section.get(key, []), key=lambda r: (row_order.get(r.manual[0], -1), r.id)
        )
        out.append(f"## {_text(section.en)} ({_text(section.zh)})\n")
        out.append(f"Section `{key}`: {_count(len(members), 'rule')}.\n")
        if members:
            out.append(_table(COLUMNS, [_row(rule, manual) for rule in members]))
    out.append(_KNOWN_INTRO)
    out.append(_table(KNOWN_COLUMNS, [_known_row(rule, manual) for rule in known]))
    return "\n".join(out)


def _table(columns: tuple[str, ...], rows: list[list[str]]) -> str:
    lines = [_line(list(columns)), _line(["---"] * len(columns))]
    lines += [_line(cells) for cells in rows]
    return "\n".join(lines) + "\n"


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _row(rule: Rule, manual: Manual) -> list[str]:
    title = rule.raw["title"]
    return [
        f"[{_code(rule.id)}](../rules/{rule.path})",
        "<br>".join(_code(key) for key in rule.manual),
        rule.severity,
        f"{_text(title['en'])}<br>{_text(title['zh'])}",
        "<br>".join(looks_at(rule)),
        "<br>".join(
            [_cause(key, manual) for key in rule.consequence_of]
            + (["*generic*" + _depends(rule)] if rule.generic else [])
        )
        or "—",
        _scenarios(rule.raw.get("scenarios") or {}),
    ]


def _known_row(rule: Rule, manual: Manual) -> list[str]:
    known = rule.known
    assert known is not None
    title = rule.raw["title"]
    fixes = [
        f"[#{f.pr}](https://github.com/NexusGPU/tensor-fusion/pull/{f.pr}) {_code(f.commit)} "
        f"({f.release})"
        for f in known.fixed_by
    ]
    return [
        f"[{_code(rule.id)}](../rules/{rule.path})",
        known.component,
        "<br>".join(_text(range_text(a, known.component)) for a in known.affected),
        "<br>".join(fixes),
        rule.severity,
        f"{_text(title['en'])}<br>{_text(title['zh'])}",
        "<br>".join(looks_at(rule)),
        "<br>".join(_cause(key, manual) for key in known.explains) or "—",
        _scenarios(rule.raw.get("scenarios") or {}),
    ]


def _depends(rule: Rule) -> str:
    return f" (depends on the {', '.join(rule.depends_on)})" if rule.depends_on else ""


def looks_at(rule: Rule) -> list[str]:
    """What the rule binds, one short phrase per item: its subjects, then its `with` data."""
    spec = rule.for_each
    items = [
        "once per bundle"
        if spec is None
        else "each " + _objects(spec["resource"], spec.get("namespace"), spec)
    ]
    items += [_binding(binding) for binding in rule.bindings.values()]
    return items


def _binding(spec: dict[str, Any]) -> str:
    if "objects" in spec:
        which = "the " if spec.get("where") else "all "
        text = which + _objects(spec["objects"], spec.get("namespace"), spec)
        if spec.get("where"):
            text += " where " + " or ".join(
                f"{_code(key)} is {_code(value)}" for key, value in spec["where"].items()
            )
        return _optional(text, spec)
    if "logs" in spec:
        return _optional(_logs(spec), spec)
    if "events_for" in spec:
        return f"events of each {_code(spec['events_for'])}"
    if "exec" in spec:
        return f"exec check {_code(spec['check'])} (collected with `--exec`)"
    if "helm" in spec:
        return _optional("the Helm release (chart, status, user-supplied values)", spec)
    if "metrics" in spec:
        return _optional("TensorFusion system metrics (collected with `--metrics`)", spec)
    raise ValueError(f"unknown binding: {sorted(spec)}")  # the schema admits no other kind


def _objects(resource: str, namespace: str | None, spec: dict[str, Any]) -> str:
    parts = [_code(resource)]
    if namespace == "tf":
        parts.append("in the TensorFusion namespace")
    elif namespace == "all":
        parts.append("in all namespaces")
    elif namespace:
        parts.append(f"in namespace {_code(namespace)}")
    if spec.get("labels"):
        parts.append(_code(f"-l {spec['labels']}"))
    if spec.get("fields"):
        parts.append(_code(f"--field-selector {spec['fields']}"))
    return " ".join(parts)


def _logs(spec: dict[str, Any]) -> str:
    containers = spec.get("containers")
    which = {False: "current", True: "previous", "both": "current and previous"}
    text = "logs ({}) of {} of {}".format(
        which[spec.get("previous", False)],
        "container " + " or ".join(_code(c) for c in containers)
        if containers
        else "every container",
        _code(spec["logs"]),
    )
    if spec.get("tail"):
        text += f", last {spec['tail']} lines"
    if spec.get("grep"):
        text += f", lines containing {_code(spec['grep'])}"
    return text


def _scenarios(spec: dict[str, list[str]]) -> str:
    cells = [
        f"{label}: " + ", ".join(_code(name) for name in spec[key])
        for key, label in (("fires", "fires"), ("silent", "silent"))
        if spec.get(key)
    ]
    return "<br>".join(cells) or "—"


def _optional(text: str, spec: dict[str, Any]) -> str:
    return f"{text} (optional)" if spec.get("optional") else text


def _cause(key: str, manual: Manual) -> str:
    if key in manual.sections:
        return f"section {_code(key)} ({_text(manual.sections[key].en)})"
    return _code(key)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _text(value: str) -> str:
    """Plain text for a table cell: one line, HTML and the cell separator escaped."""
    text = " ".join(value.split())
    for old, new in (("\\", "\\\\"), ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|")):
        text = text.replace(old, new)
    return text


def _code(value: str) -> str:
    """A code span for a table cell (GitHub needs `\\|` for a pipe even inside one)."""
    return "`" + " ".join(value.split()).replace("|", "\\|") + "`"
