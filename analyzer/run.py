"""The analysis core: a bundle path and options in, a report out. Never prints."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    """Write `text` to `path` via a temporary file in the same directory and a rename."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"output directory {parent} does not exist")
    if path.is_dir():
        raise OutputError(f"output path {path} is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise OutputError(f"cannot write in {parent}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror}") from exc
    return path
