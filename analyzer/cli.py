"""tf-analyze: the thin command line over `analyzer.run` and `analyzer.serve`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from . import __version__
from .errors import AnalyzerError, ExitCode
from .i18n import LANGS, default_lang
from .report.render import FORMATS
from .report.terminal import COLOR_CHOICES, WIDTH, summary_lines, use_color
from .results import SEVERITIES
from .run import AnalyzeOptions, run_analysis


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Write a report in this format (to -o FILE, or standard output).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Report file, a regular file replaced whole if it exists (default, or -: standard "
    "output).",
)
@click.option(
    "--lang", type=click.Choice(LANGS), help="Report language (default: from LC_ALL/LANG)."
)
@click.option(
    "--rules",
    "rules_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Use the rules in this directory instead of the shipped ones.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES[:3]),
    help="Exit 1 when a finding is at least this severe (for CI).",
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="An earlier bundle of the same cluster: the report says which findings were fixed, "
    "are new, or remain.",
)
@click.option(
    "--serve", is_flag=True, help="Serve the bundle as a read-only Kubernetes API for kubectl."
)
@click.option(
    "--port",
    default=0,
    type=click.IntRange(0, 65535),
    help="Port for --serve (default: any free port).",
)
@click.option(
    "--kubeconfig-out",
    type=click.Path(path_type=Path),
    help="Where --serve writes its kubeconfig (default: ./tf-bundle.kubeconfig).",
)
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour the terminal report (auto: on a terminal, unless NO_COLOR is set).",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="List every skipped rule and why it was skipped."
)
@click.version_option(__version__, prog_name="tf-analyze")
def main(
    bundle: Path,
    fmt: str | None,
    output: Path | None,
    lang: str | None,
    rules_dir: Path | None,
    fail_on: str | None,
    baseline: Path | None,
    serve: bool,
    port: int,
    kubeconfig_out: Path | None,
    color: str,
    verbose: bool,
) -> None:
    """Analyze a TensorFusion support BUNDLE (.tar.zst or unpacked directory), offline."""
    try:
        if serve:
            if baseline is not None:
                raise click.UsageError("--baseline compares reports; it does not go with --serve")
            from .serve import serve_bundle

            serve_bundle(
                bundle,
                port=port,
                kubeconfig=kubeconfig_out or Path("tf-bundle.kubeconfig"),
                announce=lambda line: click.echo(line, err=True),
            )
            return
        if output == Path("-"):
            output = None
        if output is not None and fmt is None:
            fmt = {".md": "md", ".html": "html", ".htm": "html", ".json": "json"}.get(output.suffix)
            if fmt is None:
                raise click.UsageError("cannot tell the format from -o; add --format md|html|json")
        opts = AnalyzeOptions(
            bundle=bundle,
            fmt=fmt,
            output=output,
            lang=lang or default_lang(),
            rules_dir=rules_dir,
            fail_on=fail_on,
            baseline=baseline,
        )
        result = run_analysis(opts)
    except AnalyzerError as exc:
        click.echo(f"tf-analyze: {exc}", err=True)
        sys.exit(int(exc.exit_code))
    if result.rendered is not None and result.written is None:
        click.echo(result.rendered, nl=False)
        stream_summary = True
    else:
        stream_summary = False
    stream = sys.stderr if stream_summary else sys.stdout
    painted = use_color(color, stream)
    width = shutil.get_terminal_size((WIDTH, 24)).columns if stream.isatty() else WIDTH
    for line in summary_lines(result.report, verbose=verbose, color=painted, width=width):
        click.echo(line, err=stream_summary, color=painted)
    if result.written is not None:
        click.echo(f"Report: {result.written}", err=stream_summary)
    sys.exit(int(ExitCode.FINDINGS if result.fails(fail_on) else ExitCode.OK))
