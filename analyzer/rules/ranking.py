"""Root cause first: nest each finding under the finding that causes it.

Rules declare `consequence_of` (manual keys or whole sections, as in the manual's
"see Controller keeps restarting"); a known bug's finding declares the rows it `explains`. A
finding whose named cause is present (on the same node, where both name one) becomes a child
of it. A generic finding (a catch-all, or a row
many causes share) also becomes a child of a specific finding about what it is about or
depends on (rules/subjects.py: the same pod, the node or GPU a workload runs on, the
controller). Everything else is a root. Roots are ordered by severity, specific before
generic, then rule id, then object.
"""

from __future__ import annotations

from collections import defaultdict

from ..results import Finding, RuleResult


def _causes(finding: Finding, candidate: Finding) -> bool:
    """Whether `candidate` is a cause `finding` names, or a known bug that explains it."""
    if candidate is finding or not _same_place(finding, candidate):
        return False
    names = set(candidate.manual) | {candidate.section}
    own = set(finding.manual) | {finding.section}
    return any(link in names for link in finding.consequence_of) or bool(
        own & set(candidate.explains)
    )


def _explains(cause: Finding, generic: Finding) -> bool:
    """A specific finding (not a note) about what a generic finding is about or depends on
    explains it, unless it is itself named a consequence of the generic one's row."""
    return (
        generic.generic
        and not cause.generic
        and cause.severity != "info"
        and bool(cause.about & generic.reach)
        and not (set(generic.manual) | {generic.section}) & set(cause.consequence_of)
    )


def _same_place(a: Finding, b: Finding) -> bool:
    """A fault on one GPU node, in one pool or of one GPU model explains nothing on another:
    two findings that each name their node (pool, model) are linked only when it is the same."""
    na, nb = _node(a), _node(b)
    if na and nb and na != nb:
        return False
    for key in ("pool", "model"):
        va, vb = _known(a.vars.get(key)), _known(b.vars.get(key))
        if va and vb and va != vb:
            return False
    return True


def _known(value: object) -> str:
    """A var's value as compared across findings; "" for none or a placeholder ("<pool>", "?").
    Models compare without the vendor prefix the two sides may or may not write."""
    if not isinstance(value, str) or not value or value.startswith(("<", "?")):
        return ""
    text = value.lower()
    for prefix in ("nvidia ", "tesla "):
        text = text.removeprefix(prefix)
    return text


def _node(f: Finding) -> str:
    """The node a finding is about: the rule's `node` value, or its Node or GPUNode object
    (they share the name); "" for a cluster-wide finding such as the controller's."""
    node = f.vars.get("node")
    if isinstance(node, str) and node not in ("", "?"):
        return node
    for ref in f.objects:
        kind, _, name = ref.partition("/")
        if kind in ("Node", "GPUNode"):
            return name
    return ""


def give_way(results: list[RuleResult], yields: dict[str, tuple[str, ...]]) -> None:
    """Drop a catch-all rule's finding where a finding of a row it `yields_to` is about the
    same object or node: the specific row explains that failure (a note, severity info,
    explains none). A catch-all left with no finding has passed."""
    specific = [
        f for r in results if not yields.get(r.rule_id) for f in r.findings if f.severity != "info"
    ]
    for result in results:
        keys = set(yields.get(result.rule_id, ()))
        if not keys or not result.findings:
            continue
        result.findings = [
            f for f in result.findings if not any(_replaces(g, f, keys) for g in specific)
        ]
        if not result.findings:
            result.outcome = "passed"


def _replaces(specific: Finding, catch_all: Finding, keys: set[str]) -> bool:
    """A finding of a row the catch-all yields to, about its object or node, that is not one
    of the catch-all's own consequences (a symptom row of the same section is not a cause)."""
    names = set(specific.manual) | {specific.section}
    own = set(catch_all.manual) | {catch_all.section}
    return (
        bool(keys & names)
        and _same_subject(catch_all, specific)
        and not own & set(specific.consequence_of)
    )


def _same_subject(a: Finding, b: Finding) -> bool:
    return bool(set(a.objects) & set(b.objects)) or bool(_node(a) and _node(a) == _node(b))


def rank(findings: list[Finding], failed: list[RuleResult] = ()) -> list[Finding]:
    """Root findings in rank order with their consequences as children. A root whose cause
    could be a rule that `failed` (ended in error) names it in `unchecked_causes`: a failed
    rule is never a silent gap that makes a consequence look like the root."""
    ordered = sorted(findings, key=Finding.sort_key)
    # Who could cause what, by the manual key or section a finding names: each finding looks
    # only at the findings its consequence_of names, in rank order, and takes the first.
    providers: dict[str, list[int]] = defaultdict(list)
    # What each finding is about -> the findings about it, for the generic ones to look up.
    about: dict[str, list[int]] = defaultdict(list)
    # A known bug that explains rows provides them as a cause too.
    explainers: dict[str, list[int]] = defaultdict(list)
    for pos, candidate in enumerate(ordered):
        for name in sorted(set(candidate.manual) | {candidate.section}):
            providers[name].append(pos)
        for name in candidate.explains:
            explainers[name].append(pos)
        for thing in candidate.about:
            about[thing].append(pos)
    roots: list[Finding] = []
    nested: list[Finding] = []
    for finding in ordered:
        positions = {p for link in finding.consequence_of for p in providers.get(link, ())}
        positions |= {
            p for name in (*finding.manual, finding.section) for p in explainers.get(name, ())
        }
        # A cause that is itself caused by this finding would make a cycle: treat as root.
        causes = [
            ordered[p]
            for p in sorted(positions)
            if _causes(finding, ordered[p]) and not _causes(ordered[p], finding)
        ]
        if finding.generic and not causes:
            # No cause the rule names is present: a specific finding about what it is about or
            # depends on heads it (a named cause, when present, is the deeper one).
            explaining = {p for thing in finding.reach for p in about.get(thing, ())}
            causes = [ordered[p] for p in sorted(explaining) if _explains(ordered[p], finding)]
        # A known bug behind this row is the deepest cause it can have.
        own = {*finding.manual, finding.section}
        causes.sort(key=lambda c: not own & set(c.explains))
        # The cause on this finding's own node explains it better than a cluster-wide one.
        here = _node(finding)
        cause = next((c for c in causes if here and _node(c) == here), None)
        cause = cause or next(iter(causes), None)
        if cause is not None:
            finding.caused_by = cause.id
            nested.append(finding)
        else:
            roots.append(finding)
    by_id = {r.id: r for r in roots}
    first: dict[str, Finding] = {}
    for f in ordered:
        first.setdefault(f.id, f)
    for finding in nested:
        root = by_id.get(finding.caused_by or "")
        if root is None:
            # Its cause is itself a consequence: hang it under that chain's root.
            parent = first[finding.caused_by or ""]
            root = by_id.get(parent.caused_by or "")
        if root is None:
            finding.caused_by = None
            roots.append(finding)
        else:
            finding.caused_by = root.id
            root.children.append(finding)
    roots.sort(key=Finding.sort_key)
    for root in roots:
        root.unchecked_causes = [
            r.rule_id for r in failed if set(root.consequence_of) & (set(r.manual) | {r.section})
        ]
    return roots
