"""What tf-collect shows once the bundle is written: what the analyzer finds in it, in one
screen, and the next step. The collector's only way into the analyzer."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import TextIO

from .i18n import STRINGS, default_lang
from .report.terminal import WIDTH, brief_lines, use_color
from .run import AnalyzeOptions, run_analysis

ISSUES_REPO = "NexusGPU/tensor-fusion"


def brief(bundle: Path, stream: TextIO, lang: str | None = None) -> list[str]:
    """The verdict, the first root causes with their fixes, and how to ask for help, for the
    bundle at `bundle`; coloured when `stream` is a terminal that wants colour."""
    lang = lang or default_lang()
    report = run_analysis(AnalyzeOptions(bundle=bundle, lang=lang)).report
    width = shutil.get_terminal_size((WIDTH, 24)).columns if stream.isatty() else WIDTH
    lines = brief_lines(report, color=use_color("auto", stream), width=width)
    return lines + next_step(report, bundle)


def next_step(report: dict, bundle: Path) -> list[str]:
    """The bundle's path and a ready command that opens a GitHub issue with the Markdown
    report as its body (the bundle is then attached by hand), or the email alternative."""
    t = STRINGS[report["lang"]]
    roots = [f for f in report["findings"] if f["role"] == "root_cause"]
    subject = roots[0]["title"] if roots else t["verdict_" + report["summary"]["verdict"]]
    title = f"{t['issue_title']}: {subject}"
    md = bundle.with_name(bundle.name.removesuffix(".tar.zst") + ".md")
    command = (
        f"tf-analyze {shlex.quote(str(bundle))} --format md -o {shlex.quote(str(md))} && "
        f"gh issue create --repo {ISSUES_REPO} --title {shlex.quote(title)} "
        f"--body-file {shlex.quote(str(md))}"
    )
    return [
        "",
        t["next_step"],
        f"  {t['next_bundle']}: {bundle}",
        f"  {t['next_issue']}",
        f"    {command}",
        f"  {t['next_email']}",
    ]
