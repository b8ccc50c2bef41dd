"""Real-world wording: the texts real tools print, placed where a cluster shows them, make the
right manual row fire; near-miss texts do not.

Each file `tests/realworld/<section>/<row>.yaml` holds, for one manual row, texts gathered
from public sources (issue threads, the tools' source), each with its source:

    row: image-pull/registry-unreachable
    places:
      - scenario: image-pull-registry-unreachable   # a sample bundle where the row fires
        marker: "i/o timeout"     # a substring of the sample's decisive text
        texts:                    # each must make the row fire
          - text: 'Failed to pull image "...": ... connection refused'
            source: https://github.com/containerd/containerd/issues/...
        near_misses:              # each must not
          - text: ...
            source: ...
            why: what makes it look like the row and why it is not
        # Optional: the sample also fires the row on something the swap does not touch (a
        # status, an event reason), so a text placed here cannot show that it is needed.
        not_decisive: why
        # Optional: what stands for "no fault" at this place when it is a value, not a message
        # (default: a neutral sentence).
        neutral: dynamic
        # Optional, for a row that fires on a status and quotes the log (a catch-all): a line
        # of each text must appear in the finding's evidence.
        quotes: true

A place is decisive when a neutral text in place of the marker silences the row: only then
does a real text firing it prove that the rule reads that text.

A text replaces, in a copy of the sample, every JSON string holding the marker (an event
message, a container status message) and every log line holding it (a multi-line text becomes
several lines). The directory is the registry: a file here is a row's corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import read_members
from scenariokit import SAMPLES
from variantkit import Members, Variant, rewrite_text

from analyzer.bundle import Bundle
from analyzer.results import Finding
from analyzer.rules.engine import analyze
from analyzer.rules.loading import Rule, load_rules
from analyzer.rules.manual import load_manual

HERE = Path(__file__).parent
MIN_TEXTS = 3


@dataclass(frozen=True)
class Case:
    row: str
    scenario: str
    marker: str
    text: str
    source: str
    fires: bool
    quotes: bool = False

    @property
    def id(self) -> str:
        kind = "fires" if self.fires else "near-miss"
        return f"{self.row}:{kind}:{self.text[:60]}"


def corpus_files() -> list[Path]:
    return sorted(HERE.glob("*/*.yaml"))


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def cases() -> list[Case]:
    out = []
    for path in corpus_files():
        doc = load(path)
        for place in doc["places"]:
            for fires, key in ((True, "texts"), (False, "near_misses")):
                for entry in place.get(key) or []:
                    out.append(
                        Case(
                            doc["row"],
                            place["scenario"],
                            place["marker"],
                            entry["text"].rstrip("\n"),
                            entry["source"],
                            fires,
                            bool(place.get("quotes")),
                        )
                    )
    return out


def swap(members: Members, marker: str, text: str) -> Members:
    """`members` with every string and log line that holds `marker` replaced by `text`."""

    def replace(value: str) -> str:
        if marker not in value:
            return value
        if "\n" not in value:
            return text
        # A log member: the lines holding the marker, each replaced by the text's lines.
        return "\n".join(text if marker in line else line for line in value.split("\n"))

    changed = rewrite_text(Variant(dict(members)), replace, lambda r: r).members
    assert changed != members, f"marker {marker!r} is not in the sample"
    return changed


@pytest.fixture(scope="module")
def rules() -> list[Rule]:
    return load_rules()


_MEMBERS: dict[str, Members] = {}


def sample(name: str) -> Members:
    if name not in _MEMBERS:
        _MEMBERS[name] = read_members(SAMPLES / f"{name}.tar.zst")
    return _MEMBERS[name]


def findings(members: Members, rules: list[Rule], tmp_path: Path) -> list[Finding]:
    return analyze(Bundle.open(Variant(members).write(tmp_path)), rules).findings()


def fired_rows(members: Members, rules: list[Rule], tmp_path: Path) -> set[str]:
    return {key for f in findings(members, rules, tmp_path) for key in f.manual}


CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_real_text_fires_its_row(case: Case, rules: list[Rule], tmp_path: Path) -> None:
    members = swap(sample(case.scenario), case.marker, case.text)
    found = [f for f in findings(members, rules, tmp_path) if case.row in f.manual]
    if not case.fires:
        assert found == [], f"{case.row} fired on a near miss from {case.source}"
        return
    assert found, f"{case.row} missed a real text from {case.source}"
    if case.quotes:
        lines = [line.strip() for line in case.text.splitlines() if line.strip()]
        evidence = [e for f in found for e in f.evidence]
        assert any(line in e for line in lines for e in evidence), "evidence quotes no line of it"


NEUTRAL = "Normal operation, nothing to report."


def places() -> list[tuple[str, dict[str, Any]]]:
    return [(load(p)["row"], place) for p in corpus_files() for place in load(p)["places"]]


def test_each_sample_fires_its_row_before_the_swap(rules: list[Rule], tmp_path: Path) -> None:
    """The swap proves something only if the row fires on the untouched sample."""
    missing = []
    for i, (row, scenario) in enumerate(sorted({(r, p["scenario"]) for r, p in places()})):
        if row not in fired_rows(sample(scenario), rules, tmp_path / str(i)):
            missing.append(f"{row} on {scenario}")
    assert missing == []


def test_each_place_is_decisive_or_says_why_not(rules: list[Rule], tmp_path: Path) -> None:
    """A neutral text at the marker silences the row, unless the place says why it cannot."""
    wrong = []
    for i, (row, place) in enumerate(places()):
        members = swap(sample(place["scenario"]), place["marker"], place.get("neutral", NEUTRAL))
        silenced = row not in fired_rows(members, rules, tmp_path / str(i))
        if silenced == bool(place.get("not_decisive")):
            state = "is decisive but says it is not" if silenced else "is not decisive"
            wrong.append(f"{row} on {place['scenario']} at {place['marker']!r} {state}")
    assert wrong == []


def test_corpus_files_are_well_formed() -> None:
    rows = set(load_manual().rows)
    problems = []
    for path in corpus_files():
        doc = load(path)
        row = doc.get("row")
        if row not in rows:
            problems.append(f"{path.name}: unknown row {row!r}")
        elif f"{path.parent.name}/{path.stem}" != row:
            problems.append(f"{path.name}: holds {row}, file name says otherwise")
        texts = [t for p in doc["places"] for t in p.get("texts") or []]
        if len(texts) < MIN_TEXTS:
            problems.append(f"{row}: {len(texts)} real texts, want at least {MIN_TEXTS}")
        for place in doc["places"]:
            if not (SAMPLES / f"{place['scenario']}.tar.zst").is_file():
                problems.append(f"{row}: no sample {place['scenario']}")
            for entry in (place.get("texts") or []) + (place.get("near_misses") or []):
                if not re.match(r"https?://", entry.get("source", "")):
                    problems.append(f"{row}: text without a source: {entry['text'][:50]!r}")
    assert problems == []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def text_reading_rows() -> set[str]:
    """The rows of rules that decide on text: a log or an in-container check they read, or an
    Event or status message (directly or through a shared function)."""
    rules_dir = Path(__file__).parents[2] / "rules"
    functions = yaml.safe_load((rules_dir / "_functions.yaml").read_text(encoding="utf-8"))

    def expand(expr: str, seen: set[str]) -> str:
        for name, fn in functions.items():
            if name not in seen and re.search(rf"\b{name}\(", expr):
                seen.add(name)
                expr += " " + expand(fn["expr"], seen)
        return expr

    rows = set()
    for path in rules_dir.glob("*/*.yaml"):
        rule = yaml.safe_load(path.read_text(encoding="utf-8"))
        decision = expand(" ".join(_strings([rule.get("when"), rule.get("let")])), set())
        texts = [
            name
            for name, binding in (rule.get("with") or {}).items()
            if isinstance(binding, dict) and ("logs" in binding or "exec" in binding)
        ]
        if re.search(r"message|error_lines", decision) or any(
            re.search(rf"\b{name}\b", decision) for name in texts
        ):
            rows.update(rule["manual"])
    return rows


def test_every_row_decided_on_text_has_a_corpus() -> None:
    covered = {load(path)["row"] for path in corpus_files()}
    assert sorted(text_reading_rows() - covered) == []
