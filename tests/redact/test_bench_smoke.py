"""The throughput benchmark on a tiny corpus: every planted secret is found (speed is not
asserted here; `python bench/redact_throughput.py` measures it). Both redaction benches run
as a user runs them, at a tiny size."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import redact_throughput as bench
import scanner_compare

BENCHES = Path(__file__).resolve().parents[2] / "bench"


def test_tiny_corpus_full_recall_and_precision() -> None:
    corpus = bench.build_corpus(400_000, seed=3)
    assert corpus.size >= 400_000 and len({k for k, _ in corpus.secrets}) >= 15
    result = bench.run(corpus)
    assert result.missed == []
    assert result.recall == 1.0 and result.address_recall == 1.0
    assert result.kept == result.keep_total


def test_recall_per_kind_and_syntax_and_near_misses() -> None:
    recall = bench.syntax_recall()
    for tally in (recall.by_kind, recall.by_source, recall.by_syntax, recall.by_depth):
        assert tally.missed == []
    assert len(recall.by_kind.found) >= 100 and len(recall.by_syntax.found) == len(bench.SYNTAXES)
    assert sorted(recall.by_depth.found) == ["depth 0", "depth 1", "depth 2", "depth 3"]
    assert sorted(recall.by_source.found) == [
        "detect-secrets", "gitleaks", "platform page", "trufflehog"
    ]  # fmt: skip
    assert bench.near_miss_precision().missed == []


def test_the_cli_measurement_runs() -> None:
    corpus = bench.build_corpus(200_000, seed=5)
    both = bench.side_by_side(corpus, workers=1, runs=1, sos=None)
    assert both.tf_collect.mb >= 0.2 and both.tf_collect.seconds > 0
    assert both.tf_collect.recall == 1.0 and both.sos_clean is None


def _run(script: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCHES / script), *args], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_throughput_bench_runs_at_a_tiny_size() -> None:
    out = _run("redact_throughput.py", "--mb", "0.3")
    assert re.search(r"\bMB/s\b", out), out


def test_the_scanner_comparison_runs_at_a_tiny_size() -> None:
    """tf-collect's own line always; a scanner that is not installed is said to be missing."""
    out = _run("scanner_compare.py", "--mb", "0.2", "--runs", "2")
    line = next(s for s in out.splitlines() if s.startswith("tf-collect redact: "))
    assert re.fullmatch(
        r"tf-collect redact: catalogue (\d+)/\1, held-out \d+/\d+, false alarms on keep 0/\d+, "
        r"[\d.]+ MB at [\d.]+ MB/s \(best of 2, one core\)",
        line,
    ), line
    for scanner in ("detect-secrets", "credsweeper"):
        assert any(s.startswith(f"{scanner}: ") for s in out.splitlines()), out


def test_the_scanner_comparison_values_are_of_their_format_and_not_placeholders() -> None:
    """Every catalogue case holds a fresh match of its format, in each context, with no word a
    scanner skips by design in it or in any text it encodes; the engine removes every one."""
    from collector.redact import Redactor
    from tf_support_schemas.tokens import PEM, STANDALONE

    cases = scanner_compare.catalogue_cases()
    assert len(cases) == sum(len(f.examples) for f in STANDALONE) * len(scanner_compare.CONTEXTS)
    examples = {e for f in STANDALONE for e in f.examples}
    rng = scanner_compare.random.Random(1)
    for fmt in STANDALONE:
        if fmt is PEM:
            continue
        for example in fmt.examples:
            value = scanner_compare.shaped_value(fmt, example, rng)
            assert value not in examples and fmt.pattern.fullmatch(value), value
            assert fmt.check is None or fmt.check(value), value
            assert value.startswith(fmt.prefix), value
            for text in (value, *scanner_compare.encoded_texts(value)):
                assert scanner_compare.skipped_words(text) == [], text
    docker = next(c for c in cases if c.kind == "docker-auth")
    assert scanner_compare.encoded_texts(docker.secrets[0])[0].startswith('{"auths":{"')
    redactor = Redactor(key=b"bench-key-0123456789abcdef")
    missed = []
    for i, case in enumerate(cases):
        assert all(scanner_compare.skipped_words(s) == [] for s in case.secrets), case.label
        out = redactor.redact_text(case.text, member=f"case{i:03d}{case.suffix}")
        missed += [f"{case.label}: {s}" for s in case.secrets if s in out]
    assert missed == []


def test_the_held_out_corpus_holds_no_word_a_scanner_skips() -> None:
    # The comparison is fair only on values other scanners read: no `fake`, `example`, `1234`
    # in a held-out secret, nor `example` hosts beside them.
    heldout = scanner_compare.heldout_cases()
    assert len(heldout) >= 70
    assert [
        c.label for c in heldout if any(scanner_compare.skipped_words(s) for s in c.secrets)
    ] == []
    assert "example" not in (BENCHES / "redact_heldout.txt").read_text().split("\n=== ", 1)[1]
