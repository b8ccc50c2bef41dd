"""What an analysis produces: rule outcomes, findings, and their root-cause order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .bundle import Missing
from .i18n import gaps_text
from .running import Running

SEVERITIES = ("critical", "error", "warning", "info")
OUTCOMES = ("fired", "passed", "skipped", "error")
# What a finding is in the report: a cause to fix, the consequence of one (nested under it),
# or a note (an info finding on its own: expected or ignorable behaviour, nothing to fix).
ROLES = ("root_cause", "consequence", "note")


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass
class Finding:
    rule_id: str
    manual: tuple[str, ...]
    severity: str
    section: str
    objects: list[str]  # "Kind/namespace/name" refs
    evidence: list[str]
    texts: dict[str, dict[str, str]]  # field -> lang -> rendered text
    commands: list[str]
    vars: dict[str, Any]
    consequence_of: tuple[str, ...] = ()
    # Manual rows or sections whose findings are this one's consequences (a known bug's
    # finding heads the rows it explains; rules/known.py sets it).
    explains: tuple[str, ...] = ()
    decisive: str = ""  # the evidence line that decided it, for the terminal
    generic: bool = False  # a generic row: it yields to a specific cause (rules/subjects.py)
    # What the finding is about (its objects and what they stand for) and what it depends on
    # (about, plus what a workload runs on and the components its rule needs).
    about: frozenset[str] = frozenset()
    reach: frozenset[str] = frozenset()
    children: list[Finding] = field(default_factory=list)
    caused_by: str | None = None  # the id of the root finding this one nests under
    # Rules that could have named this root's cause but ended in error: the ranking is unsure.
    unchecked_causes: list[str] = field(default_factory=list)

    @property
    def role(self) -> str:
        """Its role in ROLES, once ranking has nested it (rules/ranking.py sets caused_by)."""
        if self.caused_by is not None:
            return "consequence"
        return "note" if self.severity == "info" else "root_cause"

    @property
    def id(self) -> str:
        return f"{self.rule_id}@{','.join(self.objects) or '-'}"

    def sort_key(self) -> tuple[int, bool, str, str]:
        """Worst first; of the same severity, a specific row before a generic one."""
        return (severity_rank(self.severity), self.generic, self.rule_id, ",".join(self.objects))


@dataclass
class RuleResult:
    rule_id: str
    manual: tuple[str, ...]
    severity: str
    section: str
    outcome: str  # fired | passed | skipped | error
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "<object>: <where>: <message>"
    gaps: list[tuple[Missing, str]] = field(default_factory=list)  # what, for which object

    def reason(self, lang: str = "en") -> str:
        """Why the rule was skipped (what data is missing) or failed (its first errors)."""
        if self.outcome == "skipped":
            return gaps_text(self.gaps, lang)
        return "; ".join(self.errors[:3])


@dataclass
class Analysis:
    bundle: dict[str, Any]  # summary of the manifest the report shows
    results: list[RuleResult]
    roots: list[Finding]  # root causes in rank order, consequences nested in `children`
    collection_gaps: list[dict[str, Any]]  # artifacts that could not be collected
    possible_secrets: list[dict[str, Any]] = field(default_factory=list)  # member, kind, count
    absent: list[dict[str, Any]] = field(default_factory=list)  # what the API said does not exist
    warnings: list[str] = field(default_factory=list)  # what tf-collect warned about
    recollect: str | None = None  # the tf-collect command that would fill the rules' gaps
    running: Running | None = None  # what runs: each component's version and its witnesses
    # Known bugs of the running version whose signal the bundle lacks (rules/known.py: note)
    known_issues: list[dict[str, Any]] = field(default_factory=list)

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for root in self.roots:
            out.append(root)
            out.extend(root.children)
        return out

    def worst_severity(self) -> str | None:
        sev = [f.severity for f in self.findings()]
        return min(sev, key=severity_rank) if sev else None
