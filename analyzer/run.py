"""The analysis core: a bundle path and options in, a report out. Never prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import outputs

from .bundle import Bundle, Limits
from .errors import BundleError, OutputError
from .report.build import build_report
from .report.render import render
from .results import Analysis, severity_rank
from .rules.engine import analyze
from .rules.loading import load_rules


@dataclass(frozen=True)
class AnalyzeOptions:
    bundle: Path
    fmt: str | None = None  # md | html | json; None: terminal summary only
    output: Path | None = None
    lang: str = "en"
    rules_dir: Path | None = None
    fail_on: str | None = None  # critical | error | warning
    baseline: Path | None = None  # an earlier bundle of the same cluster to compare with
    limits: Limits = field(default_factory=Limits)


@dataclass
class AnalyzeResult:
    analysis: Analysis
    report: dict[str, Any]
    rendered: str | None
    written: Path | None

    def fails(self, fail_on: str | None) -> bool:
        worst = self.analysis.worst_severity()
        return bool(fail_on and worst and severity_rank(worst) <= severity_rank(fail_on))


def run_analysis(opts: AnalyzeOptions) -> AnalyzeResult:
    rules = load_rules(opts.rules_dir)  # invalid rules fail before a bundle is read
    bundle = Bundle.open(opts.bundle, opts.limits)
    old = _open_baseline(opts.baseline, opts.limits) if opts.baseline is not None else None
    analysis = analyze(bundle, rules)
    earlier = analyze(old, rules) if old is not None else None
    report = build_report(analysis, opts.lang, bundle=bundle, baseline=earlier)
    rendered = render(report, opts.fmt) if opts.fmt else None
    written = None
    if rendered is not None and opts.output is not None:
        written = write_atomic(opts.output, rendered)
    return AnalyzeResult(analysis, report, rendered, written)


def _open_baseline(path: Path, limits: Limits) -> Bundle:
    """The --baseline bundle; its errors are the main bundle's, with its exit code, saying so."""
    try:
        return Bundle.open(path, limits)
    except BundleError as exc:
        raise BundleError(f"baseline {exc}", exc.exit_code) from exc


def write_atomic(path: Path, text: str) -> Path:
    """Write the report to `path`: a regular file, replaced whole if it exists; never a
    device, a directory or a link."""
    try:
        return outputs.write(
            path, lambda fh: fh.write(text.encode("utf-8")), replace=True, what="report"
        )
    except outputs.OutputRefused as exc:
        raise OutputError(str(exc)) from None
