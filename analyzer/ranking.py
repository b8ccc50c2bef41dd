"""Root cause first: nest each finding under the finding the manual says causes it.

Rules declare `consequence_of` (manual keys or whole sections, as in the manual's
"see Controller keeps restarting"). A finding whose named cause is present becomes a child
of it; everything else is a root. Roots are ordered by severity, then rule id, then object.
"""

from __future__ import annotations

from .results import Finding


def _causes(finding: Finding, candidate: Finding) -> bool:
    if candidate is finding:
        return False
    names = set(candidate.manual) | {candidate.section}
    return any(link in names for link in finding.consequence_of)


def rank(findings: list[Finding]) -> list[Finding]:
    ordered = sorted(findings, key=Finding.sort_key)
    roots: list[Finding] = []
    nested: list[Finding] = []
    for finding in ordered:
        causes = [c for c in ordered if _causes(finding, c)]
        # A cause that is itself caused by this finding would make a cycle: treat as root.
        causes = [c for c in causes if not _causes(c, finding)]
        if causes:
            finding.caused_by = causes[0].id
            nested.append(finding)
        else:
            roots.append(finding)
    by_id = {r.id: r for r in roots}
    for finding in nested:
        root = by_id.get(finding.caused_by or "")
        if root is None:
            # Its cause is itself a consequence: hang it under that chain's root.
            parent = next(f for f in ordered if f.id == finding.caused_by)
            root = by_id.get(parent.caused_by or "")
        if root is None:
            finding.caused_by = None
            roots.append(finding)
        else:
            finding.caused_by = root.id
            root.children.append(finding)
    roots.sort(key=Finding.sort_key)
    return roots
