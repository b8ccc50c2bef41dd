"""The terminal report as a user reads it: colour only where wanted, a legend for the marks,
skipped rules folded with the command that collects what they need, and the comparison with a
--baseline bundle."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from samplekit import tf_analyze
from scenariokit import SAMPLES

from analyzer.report.terminal import summary_lines, use_color
from analyzer.run import AnalyzeOptions, run_analysis

ESC = "\x1b["
EXEC_COMMAND = (
    "tf-collect --context sample-healthy -n tensor-fusion-sys --release tensor-fusion-sys --exec"
)


def _tf_analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return tf_analyze(*args, "--lang", "en")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "choice,tty,environ,on",
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),  # a pipe or a file: no escape codes
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # no-color.org: only a non-empty value counts
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),  # asked for explicitly
        ("never", True, {}, False),
    ],
)
def test_colour_follows_the_terminal_no_color_and_the_option(
    choice: str, tty: bool, environ: dict[str, str], on: bool
) -> None:
    stream = _Tty() if tty else io.StringIO()
    assert use_color(choice, stream, environ) is on


def test_colour_marks_the_verdict_and_severities_only_when_asked() -> None:
    sample = str(SAMPLES / "controller-oom.tar.zst")
    plain = _tf_analyze(sample).stdout  # stdout is a pipe here
    assert ESC not in plain
    painted = _tf_analyze(sample, "--color", "always").stdout
    lines = painted.splitlines()
    assert lines[1] == f"  {ESC}1;31mVerdict: problems found (1 root cause){ESC}0m"
    assert f"  {ESC}1;31m!!{ESC}0m [controller-crash/oom-killed]" in painted
    assert (
        painted.replace(ESC + "1;31m", "").replace(ESC + "0m", "").replace(ESC + "2m", "") == plain
    )


def test_a_legend_explains_the_marks() -> None:
    out = _tf_analyze(str(SAMPLES / "controller-oom.tar.zst")).stdout.splitlines()
    assert out[-1] == (
        "  Legend: !! critical  ! error  ~ warning  i info  -> consequence of the root cause above"
    )


def test_skipped_rules_fold_into_one_line_with_the_command_and_all_show_with_v() -> None:
    sample = str(SAMPLES / "healthy.tar.zst")
    folded = _tf_analyze(sample).stdout.splitlines()
    assert "  7 rules skipped for data this bundle lacks (-v lists them)." in folded
    assert f"  Collect what the skipped rules need with: {EXEC_COMMAND}" in folded
    assert not [line for line in folded if line.startswith("  (skipped)")]
    verbose = _tf_analyze(sample, "-v").stdout.splitlines()
    listed = [line for line in verbose if line.startswith("  (skipped)")]
    assert len(listed) == 7
    assert (
        "  (skipped) cuda-libs/lib-path-mismatch: check cuda-libs/ldconfig was not run "
        "(tf-collect --exec runs it): greptimedb/tensor-fusion-sys-greptimedb-standalone-0, "
        "ml-team/pytorch-train-6f7c9d8b5-x2x9k"
    ) in listed
    assert not [line for line in verbose if "rules skipped for data" in line]


def test_the_baseline_comparison_is_in_the_terminal_too(tmp_path: Path) -> None:
    out = _tf_analyze(
        str(SAMPLES / "controller-oom.tar.zst"), "--baseline", str(SAMPLES / "healthy.tar.zst")
    ).stdout.splitlines()
    assert (
        "  Compared with an earlier bundle (healthy.tar.zst, 2026-11-30T10:10:00Z): "
        "fixed 0, new 1, remaining 0"
    ) in out
    at = out.index("    New (only in this bundle):")
    assert out[at + 1].startswith("      !! Controller ") and "OOMKilled" in out[at + 1]
    assert not out[at + 2].startswith("      ")  # one new finding, listed once
    back = _tf_analyze(
        str(SAMPLES / "healthy.tar.zst"), "--baseline", str(SAMPLES / "controller-oom.tar.zst")
    ).stdout.splitlines()
    assert any(line.endswith("fixed 1, new 0, remaining 0") for line in back)
    at = back.index("    Fixed (only in the earlier bundle):")
    assert back[at + 1].startswith("      !! Controller ")


def _discovery_lines(report: dict) -> list[str]:
    return [line for line in summary_lines(report) if line.startswith("  GPU discovery chain: ")]


def test_the_discovery_lines_name_the_links_findings_blame() -> None:
    report = run_analysis(
        AnalyzeOptions(bundle=SAMPLES / "gpu-discovery-two-nodes.tar.zst", lang="en")
    ).report
    assert _discovery_lines(report) == [
        "  GPU discovery chain: ip-10-40-161-25.ec2.internal: Node not labelled "
        "(Ready=True, not selected by -l nvidia.com/gpu.present=true)",
        "  GPU discovery chain: ip-10-40-166-115.ec2.internal: hypervisor not ready "
        "(0/1 CrashLoopBackOff, restarts 3 (57m ago))",
    ]
    # A finding may blame a link whose facts look fine: there is then no reason to name.
    chain = next(c for c in report["views"]["discovery"] if c["first_broken"] is not None)
    chain["links"][chain["first_broken"]]["reason"] = None
    assert _discovery_lines(report)[0] == (
        "  GPU discovery chain: ip-10-40-161-25.ec2.internal: Node "
        "(Ready=True, not selected by -l nvidia.com/gpu.present=true)"
    )
