"""After writing the bundle, tf-collect shows what the analyzer finds in it (the verdict, the
root causes with their fixes, one screen at most) and the next step: the bundle's path and a
ready command that opens a GitHub issue with the Markdown report. --no-analyze skips it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from scenariokit import collect_scenario

SCREEN = 25  # lines: what a user sees without scrolling
SEND = "Send this file as it is (do not edit or unpack it): attach it to the GitHub issue or email."


def _shown(stderr: str) -> list[str]:
    """The lines after the summary's `Bundle:` line."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Bundle: "))
    return lines[start + 1 :]


def test_the_findings_and_a_ready_issue_command_follow_the_bundle(tmp_path: Path) -> None:
    proc, bundle, _ = collect_scenario("controller-oom", tmp_path, analyze=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{bundle}\n"  # stdout stays the bundle path alone, for scripts
    shown = _shown(proc.stderr)
    assert len(shown) <= SCREEN
    title = (
        "Controller tensor-fusion-sys-controller-6b8f9d7c54-9xk2m is OOMKilled: its memory "
        "limit is too small"
    )
    md = tmp_path / "controller-oom.md"
    command = (
        f"tf-analyze {bundle} --format md -o {md} && gh issue create --repo NexusGPU/tensor-fusion"
        f" --title {shlex.quote('Support bundle: ' + title)} --body-file {md}"
    )
    assert shown == [
        "",
        "  Verdict: problems found (1 root cause)",
        f"  !! [controller-crash/oom-killed] {title}",
        # The evidence line that decided it, cut to the width of a terminal that is not one.
        "       Because: container controller: lastState.terminated.reason=OOMKilled exitCode=137"
        " finishedAt…",
        "       What to do: Raise controller.resources.limits.memory in the Helm values (for "
        "example to twice the current limit), then helm upgrade.",
        "",
        "Next step:",
        f"  Bundle: {bundle}",
        "  Open an issue with the report as its body, then drag the bundle into the issue:",
        f"    {command}",
        "  Or email the bundle to your TensorFusion support contact.",
        SEND,
    ]
    # The command runs as printed: the report is written and gh gets it as the issue's body.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$GH_ARGS"\n')
    gh.chmod(0o755)
    venv_bin = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{venv_bin}:{os.environ['PATH']}"}
    env["GH_ARGS"] = str(tmp_path / "gh-args")
    run = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    args = (tmp_path / "gh-args").read_text().splitlines()
    assert args == [
        "issue", "create", "--repo", "NexusGPU/tensor-fusion", "--title",
        f"Support bundle: {title}", "--body-file", str(md),
    ]  # fmt: skip
    body = md.read_text("utf-8")
    assert body.startswith("# TensorFusion support report\n")
    assert title in body


def test_many_root_causes_still_fit_one_screen(tmp_path: Path) -> None:
    proc, _, _ = collect_scenario("gpu-discovery-unknown-model-tflops", tmp_path, analyze=True)
    shown = _shown(proc.stderr)
    assert len(shown) <= SCREEN
    assert "  Verdict: problems found (4 root causes)" in shown
    assert shown[-1] == SEND


def test_no_analyze_skips_it(tmp_path: Path) -> None:
    proc, bundle, _ = collect_scenario("controller-oom", tmp_path, "--no-analyze", analyze=True)
    assert proc.returncode == 0, proc.stderr
    assert _shown(proc.stderr) == [SEND]
    assert proc.stdout == f"{bundle}\n"
