"""Real-world wording: the texts real tools print, placed where a cluster shows them, make the
right manual row fire; near-miss texts do not; texts the row should read and does not yet are
listed as misses, so that the census says how often the rules read the wild.

Each file `tests/realworld/<section>/<row>.yaml` holds, for one manual row, texts gathered
from public sources (issue threads, the tools' source), each with its source:

    row: image-pull/registry-unreachable
    places:
      - scenario: image-pull-registry-unreachable   # a sample bundle where the row fires
        marker: "i/o timeout"     # a substring of the sample's decisive text
        texts:                    # each must make the row fire
          - text: 'Failed to pull image "...": ... connection refused'
            source: https://github.com/containerd/containerd/issues/...
            verbatim: true
        near_misses:              # each must not
          - text: ...
            source: ...
            verbatim: true
            why: what makes it look like the row and why it is not
        misses:                   # real texts of this row the rule does not read (yet)
          - text: ...
            source: ...
            verbatim: true
            why: what the rule would need to read to fire on it
        # Optional: the sample also fires the row on something the swap does not touch (a
        # status, an event reason), so a text placed here cannot show that it is needed.
        not_decisive: why
        # Optional: what stands for "no fault" at this place when it is a value, not a message
        # (default: a neutral sentence).
        neutral: dynamic
        # Optional, for a row that fires on a status and quotes the log (a catch-all): a line
        # of each text must appear in the finding's evidence.
        quotes: true
    # Optional, only for a row with fewer real texts at decisive places than MIN_TEXTS (a row
    # decided by a status has none): the number it has and why there are no more.
    min_texts: 0
    min_texts_why: ...

Every entry (text, near miss, miss) has `text`, `source` (a URL) and exactly one of:

- `verbatim: true`: `text` is character for character what the source shows, a contiguous
  excerpt (a whole line or a whole message, leading and trailing whitespace trimmed).
- `original:` the verbatim text from the source, and `changed:` what was substituted and
  why. Allowed: TensorFusion's own names where the message is another program's wording
  around a name TensorFusion configures (its webhook mpod.tensor-fusion.ai, its Service,
  namespace, CRDs, a container it adds), and host names, pod names, IPs and timestamps in a
  line's prefix that no rule reads. Never a sample's or TensorFusion's name in the part a rule
  matches, unless that part is TensorFusion's own output in the real world. A line of
  TensorFusion's own that no public log shows is its logging call rendered: `original` is the
  call in its source at a commit, `changed` says what was filled in (time, pid, the error).

A place is decisive when a neutral text in place of the marker silences the row: only then
does a real text firing it prove that the rule reads that text. Texts at a `not_decisive` place
count as quoted, not as fire cases (the minimum and the census's share leave them out), and are
kept only where the place checks the quote; misses belong to decisive places only. A verbatim
text names no sample (its namespaces, nodes, workloads, images) and none of TensorFusion's
installed names, unless it is TensorFusion's own output (a source under github.com/NexusGPU/):
a sample name in someone else's message was put there, and an adapted text says so in
`changed`.

A text replaces, in a copy of the sample, every JSON string holding the marker (an event
message, a container status message) and every log line holding it (a multi-line text becomes
several lines). The directory is the registry: a file here is a row's corpus. The census
(`python -m tests.realworld.census`) counts the files; a test keeps it equal to the cases here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import samplekit
import yaml
from realworld.census import census, column, corpus_files, load, totals
from samplekit import SAMPLES, members, sample
from variantkit import Members, Variant, _images, name_atoms, rewrite_text

from analyzer.bundle import Bundle
from analyzer.results import Finding
from analyzer.rules.engine import analyze
from analyzer.rules.loading import Rule
from tf_support_schemas.manual import load_manual

MIN_TEXTS = 3
KINDS = {"texts": "fires", "near_misses": "near-miss", "misses": "miss"}


@dataclass(frozen=True)
class Case:
    row: str
    scenario: str
    marker: str
    text: str
    source: str
    kind: str  # fires, near-miss or miss
    column: str  # the census column it counts in
    quotes: bool = False

    @property
    def id(self) -> str:
        return f"{self.row}:{self.kind}:{self.text[:60]}"


def cases() -> list[Case]:
    out = []
    for path in corpus_files():
        doc = load(path)
        for place in doc["places"]:
            decisive = not place.get("not_decisive")
            for key, kind in KINDS.items():
                for entry in place.get(key) or []:
                    out.append(
                        Case(
                            doc["row"],
                            place["scenario"],
                            place["marker"],
                            entry["text"].rstrip("\n"),
                            entry["source"],
                            kind,
                            column(key, decisive, entry),
                            bool(place.get("quotes")),
                        )
                    )
    return out


def swap(members: Members, marker: str, text: str) -> Members:
    """`members` with every string and log line that holds `marker` replaced by `text`."""
    found = []

    def replace(value: str) -> str:
        if marker not in value:
            return value
        found.append(value)
        if "\n" not in value:
            return text
        # A log member: the lines holding the marker, each replaced by the text's lines.
        return "\n".join(text if marker in line else line for line in value.split("\n"))

    changed = rewrite_text(Variant(dict(members)), replace, lambda r: r).members
    # A text may equal the sample's own line: what counts is that the marker was there.
    assert found, f"marker {marker!r} is not in the sample"
    return changed


@pytest.fixture(scope="module")
def rules() -> list[Rule]:
    return samplekit.rules()


def findings(members: Members, rules: list[Rule], tmp_path: Path) -> list[Finding]:
    return analyze(Bundle.open(Variant(members).write(tmp_path)), rules).findings()


def fired_rows(members: Members, rules: list[Rule], tmp_path: Path) -> set[str]:
    return {key for f in findings(members, rules, tmp_path) for key in f.manual}


CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_real_text_fires_its_row(case: Case, rules: list[Rule], tmp_path: Path) -> None:
    swapped = swap(members(case.scenario), case.marker, case.text)
    found = [f for f in findings(swapped, rules, tmp_path) if case.row in f.manual]
    if case.kind == "near-miss":
        assert found == [], f"{case.row} fired on a near miss from {case.source}"
        return
    if case.kind == "miss":
        assert found == [], (
            f"{case.row} now fires on a text listed as a miss ({case.source}): move it to texts"
        )
        return
    assert found, f"{case.row} missed a real text from {case.source}"
    if case.quotes:
        lines = [line.strip() for line in case.text.splitlines() if line.strip()]
        evidence = [e for f in found for e in f.evidence]
        assert any(line in e for line in lines for e in evidence), "evidence quotes no line of it"


NEUTRAL = "Normal operation, nothing to report."


def places() -> list[tuple[str, dict[str, Any]]]:
    return [(load(p)["row"], place) for p in corpus_files() for place in load(p)["places"]]


def test_each_sample_fires_its_row_before_the_swap() -> None:
    """The swap proves something only if the row fires on the untouched sample."""
    missing = []
    for row, scenario in sorted({(r, p["scenario"]) for r, p in places()}):
        if row not in {key for f in sample(scenario).analysis.findings() for key in f.manual}:
            missing.append(f"{row} on {scenario}")
    assert missing == []


def test_each_place_is_decisive_or_says_why_not(rules: list[Rule], tmp_path: Path) -> None:
    """A neutral text at the marker silences the row, unless the place says why it cannot."""
    wrong = []
    for i, (row, place) in enumerate(places()):
        swapped = swap(members(place["scenario"]), place["marker"], place.get("neutral", NEUTRAL))
        silenced = row not in fired_rows(swapped, rules, tmp_path / str(i))
        if silenced == bool(place.get("not_decisive")):
            state = "is decisive but says it is not" if silenced else "is not decisive"
            wrong.append(f"{row} on {place['scenario']} at {place['marker']!r} {state}")
    assert wrong == []


def test_census_counts_the_cases_run() -> None:
    """The census reads the files on its own; its totals are the cases the tests above run."""
    assert totals(census()) == Counter(c.column for c in CASES)


FILES = corpus_files()
FILE_IDS = [f"{p.parent.name}/{p.stem}" for p in FILES]

FILE_KEYS = {"row", "places", "min_texts", "min_texts_why"}
PLACE_KEYS = {"scenario", "marker", "not_decisive", "neutral", "quotes", *KINDS}
ENTRY_KEYS = {"text", "source", "verbatim", "original", "changed", "why"}


def entry_problems(key: str, entry: Any) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        return [f"{key}: an entry without text: {entry!r:.60}"]
    say = f"{key} {entry['text'][:50]!r}"
    problems = [f"{say}: unknown key {k!r}" for k in sorted(set(entry) - ENTRY_KEYS)]
    if not re.match(r"https?://\S+$", str(entry.get("source", ""))):
        problems.append(f"{say}: source is not a URL: {entry.get('source')!r}")
    verbatim = "verbatim" in entry
    adapted = "original" in entry or "changed" in entry
    if verbatim == adapted:
        problems.append(f"{say}: needs exactly one of verbatim: true or original + changed")
    elif verbatim and entry["verbatim"] is not True:
        problems.append(f"{say}: verbatim must be true (else give original + changed)")
    elif adapted:
        original, changed = entry.get("original"), entry.get("changed")
        if not (isinstance(original, str) and original.strip()):
            problems.append(f"{say}: adapted without original")
        elif original.rstrip("\n") == entry["text"].rstrip("\n"):
            problems.append(f"{say}: original equals text: say verbatim: true instead")
        if not (isinstance(changed, str) and changed.strip()):
            problems.append(f"{say}: adapted without changed")
    if (key != "texts") != bool(entry.get("why")):
        problems.append(f"{say}: {'needs' if key != 'texts' else 'takes no'} why")
    return problems


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_file_is_well_formed(path: Path) -> None:
    doc = load(path)
    rows = set(load_manual().rows)
    problems = [f"unknown key {k!r}" for k in sorted(set(doc) - FILE_KEYS)]
    row = doc.get("row")
    if row not in rows:
        problems.append(f"unknown row {row!r}")
    elif f"{path.parent.name}/{path.stem}" != row:
        problems.append(f"holds {row}, file name says otherwise")
    decisive_texts = 0
    for place in doc["places"]:
        at = f"{place.get('scenario')} at {place.get('marker')!r}"
        problems += [f"{at}: unknown key {k!r}" for k in sorted(set(place) - PLACE_KEYS)]
        if not (SAMPLES / f"{place['scenario']}.tar.zst").is_file():
            problems.append(f"{at}: no sample {place['scenario']}")
        if place.get("not_decisive"):
            if place.get("misses"):
                problems.append(f"{at}: misses at a place that decides nothing prove nothing")
            if place.get("texts") and not place.get("quotes"):
                problems.append(f"{at}: texts at a place that decides nothing need quotes: true")
        else:
            decisive_texts += len(place.get("texts") or [])
        for key in KINDS:
            for entry in place.get(key) or []:
                problems += [f"{at}: {p}" for p in entry_problems(key, entry)]
    want = doc.get("min_texts", MIN_TEXTS)
    if want != MIN_TEXTS and not doc.get("min_texts_why"):
        problems.append(f"min_texts {want} without min_texts_why")
    if decisive_texts < want:
        problems.append(f"{decisive_texts} texts at decisive places, want at least {want}")
    assert problems == []


# TensorFusion's names as an install shows them (its namespace, its webhook), in every sample.
TF_NAMES = ("tensor-fusion-sys", "mpod.tensor-fusion.ai")
# Images a sample made up or TensorFusion ships; the other images are public programs' own.
SAMPLE_IMAGE = re.compile(r"acme|example\.com|tensorfusion/|tensor-fusion-")


def sample_names(scenario: str) -> set[str]:
    """The names the sample's cluster chose, as a text placed there could have picked them up:
    namespaces, nodes, workloads, pools and the like (with a dash or dot: a plain word such as
    "monitoring" is no sign), the images it made up or TensorFusion's (without the tag), and
    TensorFusion's installed names. A public program's name is not one (dcgm-exporter)."""
    held = members(scenario)
    images = {re.split(r"[@]|:(?=[^/]*$)", i)[0] for i in _images(held)}
    public = {i.rsplit("/", 1)[-1] for i in images if not SAMPLE_IMAGE.search(i)}
    names = {n for n in name_atoms(held) if re.search(r"[-.]", n) and n not in public}
    return names | {i for i in images if SAMPLE_IMAGE.search(i)} | set(TF_NAMES)


def names_in(text: str, names: set[str]) -> list[str]:
    return sorted(
        n for n in names if re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![A-Za-z0-9])", text)
    )


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_texts_name_no_sample_unless_they_say_so(path: Path) -> None:
    """A verbatim text from another project holds no name of a sample or of TensorFusion's
    install: one that does was written here. An adapted one names in `changed` each name it
    put in."""
    problems = []
    for place in load(path)["places"]:
        names = sample_names(place["scenario"])
        for key in KINDS:
            for entry in place.get(key) or []:
                found = names_in(entry["text"], names)
                say = f"{key} {entry['text'][:50]!r}"
                if entry.get("verbatim") is True:
                    if found and not entry["source"].startswith("https://github.com/NexusGPU/"):
                        problems.append(f"{say}: verbatim, yet names {', '.join(found)}")
                    continue
                put_in = [n for n in found if n not in names_in(entry.get("original", ""), names)]
                unsaid = [n for n in put_in if n not in str(entry.get("changed", ""))]
                if unsaid:
                    problems.append(f"{say}: changed does not say it put in {', '.join(unsaid)}")
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
            rows.update(rule.get("manual", []))  # a known bug implements no row
    return rows


def test_every_row_decided_on_text_has_a_corpus() -> None:
    covered = {load(path)["row"] for path in corpus_files()}
    assert sorted(text_reading_rows() - covered) == []
