"""The console entry point, as a user runs it: a piped report arrives whole with the exit code of
its findings, and errors are one line with their own exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from analyzer.errors import ExitCode
from analyzer.report.terminal import summary_lines
from analyzer.run import AnalyzeOptions, run_analysis

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"


def _tf_analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analyzer", *args], capture_output=True, text=True, timeout=120
    )


def test_a_piped_report_arrives_whole_with_the_exit_code_of_its_findings() -> None:
    bundle = SAMPLES / "controller-bad-config.tar.zst"
    expected = run_analysis(AnalyzeOptions(bundle=bundle, fmt="md", lang="en"))
    proc = _tf_analyze(str(bundle), "--format", "md", "--lang", "en", "--fail-on", "error")
    assert proc.returncode == ExitCode.FINDINGS, proc.stderr
    assert proc.stdout == expected.rendered
    # The terminal summary goes to stderr beside the report, every line of it.
    assert proc.stderr.splitlines() == summary_lines(expected.report)


def test_errors_keep_their_exit_codes_and_one_line_messages(tmp_path: Path) -> None:
    proc = _tf_analyze(str(tmp_path / "missing.tar.zst"))
    assert proc.returncode == ExitCode.NOT_A_BUNDLE
    assert proc.stderr.strip().splitlines() == [
        f"tf-analyze: {tmp_path / 'missing.tar.zst'}: no such file or directory"
    ]
    assert _tf_analyze("--no-such-option").returncode == 2  # click's usage error
