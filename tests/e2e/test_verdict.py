"""Honest verdicts: a bundle whose collection ran out of time is never called healthy.

A real tf-collect run against a slow API server with `--timeout 2` leaves most lists timed out;
tf-analyze must then say "inconclusive" first, in the terminal, Markdown, HTML and JSON alike,
with what is missing and the exact tf-collect command that would collect it. A complete healthy
bundle stays "no problem found" although the opt-in --exec checks were not run, and a bundle
with a problem says "problems found".
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest
from faultkit import FaultyEmulator
from samplekit import tf_analyze
from scenariokit import SAMPLES, collect_scenario
from scenarioloader import load_scenario

RECOLLECT = "tf-collect --context sample-healthy -n tensor-fusion-sys --release tensor-fusion-sys"


def _analyze(bundle: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return tf_analyze(str(bundle), "--lang", "en", *extra)


def _formats(bundle: Path, tmp: Path) -> dict[str, str]:
    """The terminal report and the three files, for one bundle."""
    out = {"terminal": _analyze(bundle, "--color", "never").stdout}
    for fmt in ("md", "html", "json"):
        path = tmp / f"{bundle.stem}.{fmt}"
        proc = _analyze(bundle, "--format", fmt, "-o", str(path))
        assert proc.returncode == 0, proc.stderr
        out[fmt] = path.read_text("utf-8")
    return out


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("timed-out")
    with FaultyEmulator(load_scenario(SAMPLES / "healthy")) as emu:
        emu.faults.latency = 0.5  # every answer slow: --timeout 2 ends the run early
        proc, bundle, _ = collect_scenario("healthy", tmp, "--timeout", "2", emulator=emu)
    return proc.returncode, _formats(bundle, tmp)


def test_a_collection_that_ran_out_of_time_is_inconclusive_in_every_format(
    timed_out: tuple[int, dict[str, str]],
) -> None:
    code, out = timed_out
    assert code == 3
    report = json.loads(out["json"])
    s = report["summary"]
    assert s["verdict"] == "inconclusive"
    assert s["root_causes"] == 0
    assert len(s["unsure_rules"]) > 20
    cut = "timeout (the overall --timeout was reached before this call)"
    assert [m for m in s["missing"] if m.endswith(f": {cut}")]
    # The same cluster, namespace and release, without the --timeout that ran out.
    assert s["recollect"] == RECOLLECT

    terminal = out["terminal"].splitlines()
    assert terminal[1] == "  Verdict: inconclusive"  # said first, right under the title
    assert re.fullmatch(
        r"  \d+ rules that could have found a problem could not run, .*", terminal[2]
    )
    assert terminal[3] == f"    Missing: {s['missing'][0]}"  # in the order the JSON has
    assert f"  Collect what they need with: {RECOLLECT}" in terminal
    assert not any("No problem found" in line for line in terminal)

    md = out["md"]
    assert md.split("\n\n")[1] == "**Verdict: inconclusive**"
    assert f"```sh\n{RECOLLECT}\n```" in md
    assert f"- Missing: {s['missing'][0]}" in md
    assert "No problem found" not in md

    page = out["html"]
    verdict = re.search(r'<div class="verdict (\S+)" id="verdict"[^>]*><b>([^<]*)</b>', page)
    assert verdict and verdict.groups() == ("inconclusive", "Verdict: inconclusive")
    assert f"<pre>{html.escape(RECOLLECT)}</pre>" in page
    assert 'id="no-findings"' not in page


@pytest.mark.parametrize(
    "sample,verdict,head",
    [
        ("healthy", "no-problem", "  Verdict: no problem found"),
        ("controller-oom", "problems", "  Verdict: problems found (1 root cause)"),
    ],
)
def test_complete_bundles_say_what_they_found(
    sample: str, verdict: str, head: str, tmp_path: Path
) -> None:
    out = _formats(SAMPLES / f"{sample}.tar.zst", tmp_path)
    report = json.loads(out["json"])
    assert report["summary"]["verdict"] == verdict
    assert report["summary"]["unsure_rules"] == []  # the skipped --exec rules were opt-in
    assert out["terminal"].splitlines()[1] == head
    assert (
        out["md"].split("\n\n")[1].startswith(f"**Verdict: {head.split(': ')[1].split(' (')[0]}**")
    )
    assert f'<div class="verdict {verdict}" id="verdict"' in out["html"]
