"""Ranking through its index nests exactly as comparing every finding with every other did."""

from __future__ import annotations

import random

from analyzer.results import Finding
from analyzer.rules.ranking import _causes, rank

KEYS = ("a/x", "a/y", "b/x", "b/y", "c/x")


def _finding(rng: random.Random, i: int) -> Finding:
    manual = rng.choice(KEYS)
    links = tuple(rng.sample((*KEYS, "a", "b", "c"), rng.randrange(3)))
    return Finding(
        rule_id=manual,
        manual=(manual,),
        severity=rng.choice(("critical", "error", "warning")),
        section=manual.split("/")[0],
        objects=[f"Pod/ns/p{i}"],
        evidence=[],
        texts={},
        commands=[],
        vars={},
        consequence_of=links,
    )


def _rank_by_pairs(findings: list[Finding]) -> list[Finding]:
    """The quadratic original, kept as the reference."""
    ordered = sorted(findings, key=Finding.sort_key)
    roots, nested = [], []
    for finding in ordered:
        causes = [c for c in ordered if _causes(finding, c)]
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


def _shape(roots: list[Finding]) -> list[tuple[str, str | None, list[str]]]:
    return [(r.id, r.caused_by, [c.id for c in r.children]) for r in roots]


def test_indexed_ranking_matches_the_pairwise_one() -> None:
    for seed in range(200):
        rng = random.Random(seed)
        n = rng.randrange(1, 25)
        expected = _shape(
            _rank_by_pairs([_finding(random.Random(seed * 100 + i), i) for i in range(n)])
        )
        got = _shape(rank([_finding(random.Random(seed * 100 + i), i) for i in range(n)]))
        assert got == expected, seed
