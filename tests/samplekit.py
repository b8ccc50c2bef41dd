"""The committed sample bundles, each read and analysed once per test process.

A sample is analysed by the analyzer's own core, `analyzer.run.run_analysis` (what tf-analyze
calls), with the shipped rules loaded once; every test that reads the sample shares the result
(each pytest-xdist worker keeps its own). Shared results are read, never changed: a test that
needs to change a report copies it first.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from bundlekit import read_members
from click.testing import CliRunner

from analyzer import cli, run
from analyzer.rules.loading import Rule, load_rules

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bundles"
NAMES = tuple(sorted(p.name.removesuffix(".tar.zst") for p in SAMPLES.glob("*.tar.zst")))


@cache
def rules() -> list[Rule]:
    """The shipped rules, loaded and validated once."""
    return load_rules(None)


def _rules_from(rules_dir: Path | None) -> list[Rule]:
    return rules() if rules_dir is None else load_rules(rules_dir)


def analyse(bundle: Path, lang: str = "en") -> run.AnalyzeResult:
    """What tf-analyze finds in `bundle`, in-process, with the shipped rules loaded once."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run, "load_rules", _rules_from)
        return run.run_analysis(run.AnalyzeOptions(bundle=bundle, lang=lang))


def tf_analyze(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """tf-analyze's command run in this process (in `cwd`), its output on pipes (never a
    terminal): what a run in its own process prints and exits with, without its start-up."""
    args = tuple(map(str, args))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run, "load_rules", _rules_from)
        if cwd is not None:
            mp.chdir(cwd)
        result = CliRunner().invoke(cli.main, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


@cache
def sample(name: str, lang: str = "en") -> run.AnalyzeResult:
    """The committed sample bundle `name`, analysed once per process and language."""
    return analyse(SAMPLES / f"{name}.tar.zst", lang)


def report(name: str, lang: str = "en") -> dict[str, Any]:
    """The report of the committed sample `name` (shared: read it, do not change it)."""
    return sample(name, lang).report


@cache
def members(name: str) -> dict[str, bytes]:
    """The members of the committed sample `name`, read once per process."""
    return read_members(SAMPLES / f"{name}.tar.zst")
