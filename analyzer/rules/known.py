"""Known TensorFusion bugs: whether the version that runs has one, and how a finding cites it.

A rule under rules/known-issues/ carries a `known_issue` block: the component whose version
decides (the operator, or the Helm chart for a defect of the chart's templates and values),
the affected ranges per release line as half-open intervals, the commits that fixed it, and
the manual rows and sections whose findings it explains. Its `when` is the defect's signal in
a bundle. The engine asks `applies` first: a version outside every range is silent; an
affected version with the signal cites the bug and heads what it explains; without the signal
it is a note under "Known issues of this version"; an unknown version with the signal says so
and how to find the version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s.semver import Version, in_range, parse

from ..i18n import LANGS, VERSIONS, version_text
from ..results import Finding
from ..running import Running
from .releases import ReleaseData

CHART_REPO = (
    "tensor-fusion/tensor-fusion"  # helm repo add tensor-fusion https://download.tensor-fusion.ai
)


@dataclass(frozen=True)
class Affected:
    line: str | None  # "v1" or "v2"; None: every version of the component (charts)
    low: str | None  # the first affected version; None: from the line's first release
    fixed: str | None  # the first fixed version; None: not fixed on this line

    def holds(self, version: Version) -> bool:
        return (self.line is None or version.line == self.line) and in_range(
            version, self.low, self.fixed
        )


@dataclass(frozen=True)
class Fix:
    release: str  # v1.49.15, or tensor-fusion-helm-1.7.7 for a chart fix
    pr: int
    commit: str


@dataclass(frozen=True)
class KnownIssue:
    name: dict[str, str]  # lang -> the defect's name, for the list of known issues
    component: str  # operator | chart
    affected: tuple[Affected, ...]
    fixed_by: tuple[Fix, ...]
    explains: tuple[str, ...]  # manual rows or sections whose findings it causes

    @classmethod
    def of(cls, data: dict[str, Any]) -> KnownIssue:
        return cls(
            name=dict(data["name"]),
            component=data["component"],
            affected=tuple(
                Affected(a.get("line"), a.get("from"), a.get("fixed")) for a in data["affected"]
            ),
            fixed_by=tuple(Fix(f["release"], f["pr"], f["commit"]) for f in data["fixed_by"]),
            explains=tuple(data.get("explains", [])),
        )


@dataclass(frozen=True)
class Citation:
    """How a known issue stands against what runs."""

    state: str  # affected | clear | unknown
    component: str
    version: str  # what runs ("" unknown)
    source: str  # where that version was read (a running.SOURCES name)
    prs: tuple[int, ...]  # the fixes of the running line (all of them when unknown)
    why_unknown: str = ""  # latest, pulled ...; no pod; no Helm release
    affected: Affected | None = None
    fixed: str = ""  # the first fixed release on the running line ("" when open)
    chart: str = ""  # the first chart whose defaults ship it ("" none)
    command: str = ""  # the pinned upgrade ("" when nothing to upgrade to)
    crosses_line: bool = False  # the chart of `command` installs the other release line

    def context(self) -> dict[str, Any]:
        """What the finding's texts read as `known`."""
        return {
            "state": self.state,
            "component": self.component,
            "version": self.version,
            "fixed": self.fixed,
            "chart": self.chart,
            "command": self.command,
            "range": range_text(self.affected, self.component) if self.affected else "",
            "prs": ", ".join(f"NexusGPU/tensor-fusion#{p}" for p in self.prs),
        }


def cite(
    known: KnownIssue, running: Running, releases: ReleaseData, tf: dict[str, Any]
) -> Citation:
    version, source, why = _version(known.component, running)
    every = tuple(dict.fromkeys(f.pr for f in known.fixed_by))
    if version is None:
        return Citation("unknown", known.component, "", source, every, why_unknown=why)
    hit = next((a for a in known.affected if a.holds(version)), None)
    if hit is None:
        return Citation("clear", known.component, str(version), source, every)
    # The fixes of the running line (a chart's fix is a chart release): the others are noise.
    mine = tuple(
        dict.fromkeys(f.pr for f in known.fixed_by if _line_of(f.release) in (hit.line, ""))
    )
    chart, command, crosses = _upgrade(
        known.component, hit, running.version("operator"), releases, tf
    )
    return Citation(
        "affected", known.component, str(version), source, mine or every,
        affected=hit, fixed=hit.fixed or "", chart=chart, command=command, crosses_line=crosses,
    )  # fmt: skip


def range_text(a: Affected, component: str, lang: str = "en") -> str:
    """An affected range as the catalogue writes it: `v1 >= 1.43.3, < 1.43.7`."""
    bounds = [f">= {a.low}" if a.low else "", f"< {a.fixed}" if a.fixed else ""]
    text = f"{a.line or component} {', '.join(b for b in bounds if b)}".strip()
    if a.fixed is None:
        text += f" ({version_text('not_fixed', lang, line=a.line or component)})"
    return text


def dress(finding: Finding, known: KnownIssue, citation: Citation, tf: dict[str, Any]) -> None:
    """Say in `finding` which known bug it is, of which version, and the pinned upgrade that
    fixes it; a finding on an unknown version says so and how to find it, and heads nothing."""
    for lang in LANGS:
        texts = finding.texts
        title, explanation, fix = (texts[f][lang] for f in ("title", "explanation", "fix"))
        words = {
            "component": citation.component,
            "version": citation.version,
            "prs": ", ".join(f"NexusGPU/tensor-fusion#{p}" for p in citation.prs),
        }
        if citation.state == "unknown":
            fixes = [a.fixed for a in known.affected if a.fixed]
            texts["title"][lang] = version_text(
                "title_unknown", lang, title=title, fixed=" / ".join(fixes) or "?", **words
            )
            how = version_text(f"how_{citation.component}", lang, namespace=tf["namespace"])
            ranges = "; ".join(range_text(a, citation.component, lang) for a in known.affected)
            lead = version_text(
                "explain_unknown", lang, why=citation.why_unknown, how=how, ranges=ranges, **words
            )
        else:
            assert citation.affected is not None
            rng = range_text(citation.affected, citation.component, lang)
            source = (
                version_text(citation.source, lang)
                if citation.source in VERSIONS[lang]
                else citation.source
            )
            if citation.fixed:
                texts["title"][lang] = version_text(
                    "title_affected", lang, title=title, fixed=citation.fixed, **words
                )
            else:
                not_fixed = version_text(
                    "not_fixed", lang, line=citation.affected.line or citation.component
                )
                texts["title"][lang] = version_text(
                    "title_open", lang, title=title, not_fixed=not_fixed, **words
                )
            lead = version_text("explain_affected", lang, range=rng, source=source, **words)
            fix = _upgrade_words(citation, lang) + " " + fix
        texts["explanation"][lang] = f"{lead} {explanation}"
        texts["fix"][lang] = fix.strip()
    if citation.state == "unknown":
        finding.severity = (
            "warning" if finding.severity in ("critical", "error") else finding.severity
        )
    else:
        finding.explains = known.explains
        if citation.command:
            finding.commands = [citation.command, *finding.commands]
    finding.evidence = [_version_line(citation), *finding.evidence]


def _upgrade_words(citation: Citation, lang: str) -> str:
    if not citation.fixed:
        line = (citation.affected.line if citation.affected else "") or citation.component
        return version_text("fix_open", lang, line=line)
    if citation.chart:
        words = version_text("fix_upgrade", lang, fixed=citation.fixed, chart=citation.chart)
        if citation.crosses_line:
            words += " " + version_text("fix_crosses", lang, chart=citation.chart)
        return words
    return version_text("fix_upgrade_image", lang, fixed=citation.fixed)


def _version_line(citation: Citation) -> str:
    """The evidence line that says which version runs, where it was read, and the range."""
    if citation.state == "unknown":
        return f"{citation.component} version unknown: {citation.why_unknown}"
    assert citation.affected is not None
    return (
        f"{citation.component} {citation.version} ({citation.source}) is in "
        f"{range_text(citation.affected, citation.component)}"
    )


def note(known: KnownIssue, citation: Citation) -> dict[str, Any]:
    """A known bug of the running version whose signal the bundle does not show: what the
    report lists under "Known issues of this version"."""
    assert citation.affected is not None
    lines = {}
    for lang in LANGS:
        rng = range_text(citation.affected, citation.component, lang)
        words = {"component": citation.component, "version": citation.version, "range": rng}
        line = (
            version_text("note_line", lang, fixed=citation.fixed, **words)
            if citation.fixed
            else version_text("note_line_open", lang, **words)
        )
        if citation.crosses_line:
            line += version_text("then", lang) + version_text(
                "fix_crosses", lang, chart=citation.chart
            )
        lines[lang] = line
    return {
        "title": known.name,
        "line": lines,
        "component": citation.component,
        "version": citation.version,
        "fixed": citation.fixed,
        "chart": citation.chart,
        "command": citation.command,
        "prs": list(citation.prs),
    }


def _line_of(release: str) -> str:
    """The release line of a fix's release ("" for a chart release)."""
    version = parse(release)
    return version.line if version else ""


def _version(component: str, running: Running) -> tuple[Version | None, str, str]:
    if component == "chart":
        chart = parse(running.chart)
        return chart, "helm-chart", "" if chart else "no Helm release in the bundle"
    found = running.components.get(component)
    if found is None or not found.readings:
        return None, "", f"no {component} pod and no Helm release in the bundle"
    version = found.parsed
    if version is not None:
        return version, found.source, ""
    if found.floating:
        pulled = f", pulled {found.pulled}" if found.pulled else ""
        return None, found.source, f"image tag {found.floating}{pulled}"
    return None, found.source, "its image names no version and it logged none"


def _upgrade(
    component: str,
    hit: Affected,
    operator: Version | None,
    releases: ReleaseData,
    tf: dict[str, Any],
) -> tuple[str, str, bool]:
    """(chart, command, crosses line) of the pinned upgrade that brings the fix; crossing: the
    chart installs the other release line than the operator that runs."""
    if hit.fixed is None:
        return "", "", False
    fixed = parse(hit.fixed)
    assert fixed is not None  # the schema holds ranges to versions

    def helm(chart: str) -> str:
        # The order every rule's helm command has: release, chart, --version, namespace.
        return f"helm upgrade {tf['release']} {CHART_REPO} --version {chart} -n {tf['namespace']}"

    if component == "chart":
        target = releases.chart(hit.fixed)
        crosses = bool(target and operator and target.line != operator.line)
        return hit.fixed, f"{helm(hit.fixed)} --reuse-values", crosses
    chart = releases.first_chart(fixed.line, fixed)
    if chart is not None:
        return (
            chart.chart,
            f"{helm(chart.chart)} --reuse-values --set controller.image.tag={chart.operator}",
            False,
        )
    # No chart ships it by default (a fix of the v1 line after charts stopped moving its
    # operator): the newest chart of the line, with the fixed operator image.
    last = releases.last_chart(fixed.line)
    version = last.chart if last else (tf.get("chart_version") or "<chart-version>")
    return (
        "",
        f"{helm(version)} --reuse-values --set controller.image.tag={hit.fixed}",
        False,
    )
