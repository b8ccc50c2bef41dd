"""tf-collect: the thin command line over `collector.run.collect` (and `tf-collect redact`).

`tf-collect [options]` collects: the command is a click group that runs the collection when
no subcommand is named.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tf_support_schemas import artifact_summary

from . import __version__
from .budget import parse_size
from .entry import terminate
from .errors import CollectError, ExitCode
from .redact import Redactor, key_from_env
from .redact.mapfile import check_map_path, write_map
from .redact.offline import InputError, redact_path
from .redact.parallel import default_workers

# The collection machinery (the Kubernetes client above all) loads only to collect:
# `tf-collect redact` starts without it.
if TYPE_CHECKING:
    from .locate import Installation
    from .run import CollectOptions, CollectResult

NEXT_STEP = (
    "Send this file as it is (do not edit or unpack it): attach it to the GitHub issue or email."
)


@click.group(
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Path to a kubeconfig file.")
@click.option("--context", help="Kubeconfig context to use (default: current context).")
@click.option(
    "-n",
    "--namespace",
    help="Namespace TensorFusion is installed in (default: found from its operator pods, "
    "webhook, CRDs and Helm release).",
)
@click.option(
    "--release",
    help="Helm release name of TensorFusion (default: found like the namespace).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Bundle path, which must not exist (default: a new tf-support-<context>-<UTC time>"
    ".tar.zst in the current directory).",
)
@click.option(
    "--tail",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Log lines kept per container (newest first).",
)
@click.option(
    "--since",
    "since_seconds",
    type=click.IntRange(min=1),
    help="Only log lines newer than this many seconds.",
)
@click.option(
    "--concurrency",
    default=8,
    show_default=True,
    type=click.IntRange(1, 64),
    help="API requests in flight at once.",
)
@click.option(
    "--qps",
    default=50.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Client-side limit of API requests per second (kube-scheduler's own default).",
)
@click.option(
    "--request-timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds one API request may take.",
)
@click.option(
    "--timeout",
    "overall_timeout",
    type=click.FloatRange(min=1),
    help="Seconds the whole collection may take; what is left is recorded as timeout.",
)
@click.option(
    "--pod",
    "pods",
    multiple=True,
    metavar="NS/NAME",
    help="Also look closely at this pod (repeatable).",
)
@click.option(
    "--workload-namespace",
    "workload_namespaces",
    multiple=True,
    metavar="NS",
    help="A namespace with TensorFusion workloads (repeatable; needed when you may "
    "not list pods cluster-wide).",
)
@click.option(
    "--exec",
    "exec_",
    is_flag=True,
    help="Run the manual's read-only checks inside TF containers and on GPU nodes.",
)
@click.option(
    "--exec-limit",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="With --exec: at most this many workload pods (besides --pod ones).",
)
@click.option(
    "--metrics",
    is_flag=True,
    help="Read allocation failures from GreptimeDB through the API server.",
)
@click.option(
    "--redaction-map",
    type=click.Path(path_type=Path),
    help="Also write original -> placeholder to this file (outside the bundle; keep it private).",
)
@click.option(
    "--redact-public-ips",
    is_flag=True,
    help="Pseudonymise public IP addresses too (internal ones always are).",
)
@click.option(
    "--max-size",
    default="20MB",
    show_default=True,
    callback=lambda _ctx, _param, value: _max_size(value),
    help="Size budget of the bundle (20MB, 5MiB, 0 for none): over it, the oldest log lines "
    "are left out, and the manifest and the summary say which.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing bundle (or redaction map) at -o; only a regular file is ever "
    "replaced.",
)
@click.option(
    "--no-analyze",
    is_flag=True,
    help="Do not show what the analyzer finds in the bundle once it is written.",
)
@click.option("--dry-run", is_flag=True, help="Print the collection plan; collect nothing.")
@click.version_option(__version__, prog_name="tf-collect")
@click.pass_context
def main(
    ctx: click.Context,
    dry_run: bool,
    no_analyze: bool,
    exec_: bool,
    pods: tuple[str, ...],
    **kwargs: object,
) -> None:
    """Collect a TensorFusion support bundle (read-only; Secrets are never read).

    Tokens, keys, passwords and internal addresses are redacted before anything reaches
    disk. `tf-collect redact PATH -o OUT` cleans files you already have.
    """
    if ctx.invoked_subcommand is not None:
        return
    for pod in pods:
        if pod.count("/") != 1 or not all(pod.split("/")):
            raise click.BadParameter(f"{pod!r} is not NAMESPACE/NAME", param_hint="--pod")
    from .run import CollectOptions

    opts = CollectOptions(exec=exec_, pods=pods, **kwargs)  # type: ignore[arg-type]
    if dry_run:
        _print_plan(opts)
        return
    sys.exit(_run(opts, analyze=not no_analyze))


def _max_size(value: str) -> int | None:
    try:
        return parse_size(value)
    except CollectError as exc:
        message = str(exc).removeprefix("--max-size ")
        raise click.BadParameter(message, param_hint="--max-size") from None


def _print_plan(opts: CollectOptions) -> None:
    from .plan import coverage, default_plan, step_summary

    plan = default_plan(with_exec=True, with_metrics=True)
    steps = {s.id: s for s in plan}
    namespace = opts.namespace or "<found at run time>"
    release = opts.release or "<found at run time>"
    click.echo(f"Collection plan (namespace {namespace}, release {release}):")
    for section, commands in coverage(plan).items():
        click.echo(f"\n[{section}]")
        for command, step_id in commands:
            click.echo(f"  {command}")
            click.echo(f"      covered by {step_id}: {step_summary(steps[step_id], namespace)}")
    uncited = [s for s in plan if not s.manual]
    if uncited:
        click.echo("\n[also collected]")
        for step in uncited:
            click.echo(f"  {step.id}: {step_summary(step, namespace)}")
    if not opts.exec:
        click.echo("\n(--exec and --metrics steps run only when asked for)")


def _run(opts: CollectOptions, *, analyze: bool) -> int:
    from .progress import make_progress
    from .run import collect

    # SIGTERM means the same as Ctrl-C: stop now, leave nothing behind.
    signal.signal(signal.SIGTERM, terminate)
    progress = make_progress(sys.stderr)
    try:
        with progress:
            result = collect(opts, progress.update, _located)
    except KeyboardInterrupt:
        click.echo("tf-collect: interrupted; no bundle was written", err=True)
        _hard_exit(ExitCode.INTERRUPTED)
    except CollectError as exc:
        click.echo(f"tf-collect: {exc}", err=True)
        return int(exc.exit_code)
    _summary(result)  # interrupts are ignored from the moment the bundle exists
    interrupted = analyze and not _show_findings(result.path)
    click.echo(NEXT_STEP, err=True)
    click.echo(str(result.path))
    code = int(ExitCode.PARTIAL if result.failed or result.warnings else ExitCode.OK)
    if interrupted:
        # A Ctrl-C that stopped an import of the analyzer leaves CPython set to end the
        # process by SIGINT on a normal exit (see entry.py): end with the code instead.
        _hard_exit(code)
    return code


def _located(found: Installation) -> None:
    """Where the collection looks, and why, before it starts (its warnings end the summary)."""
    if found.found:
        click.echo(
            f"TensorFusion: namespace {found.namespace}, release {found.release} "
            f"(found: {'; '.join(found.found_by)})",
            err=True,
        )


def _summary(result: CollectResult) -> None:
    counts = result.by_status()
    parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    click.echo(
        f"Collected {len(result.artifacts)} artifacts ({parts}) in {result.duration_s:.1f}s "
        f"with {result.requests} API requests.",
        err=True,
    )
    redacted = result.redaction.get("counts") or {}
    if redacted:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(redacted.items()))
        click.echo(f"Redacted {sum(redacted.values())} values ({kinds}).", err=True)
    trimmed = [a for a in result.artifacts if a.get("trimmed_lines")]
    if trimmed:
        lines = sum(a["trimmed_lines"] for a in trimmed)
        click.echo(
            f"Left out the oldest {lines} lines of {len(trimmed)} logs to keep the bundle under "
            f"--max-size {_size(result.max_size or 0)}.",
            err=True,
        )
    absent = [a for a in result.artifacts if a["status"] == "not_found"]
    for art in [*result.failed, *absent]:
        # Named as the analyzer's report names it: the step, then what and where.
        what = artifact_summary(art)
        click.echo(f"  {art['status']}: {art['step']}: {what}: {art.get('message', '')}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"Bundle: {result.path} ({_size(result.size)})", err=True)


def _show_findings(bundle: Path) -> bool:
    """What the analyzer finds in the bundle just written, and the next step. The bundle is
    already safe on disk: Ctrl-C here skips the analysis only (False), and an analysis that
    fails says so and changes nothing else."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from analyzer.brief import brief  # the rules and CEL load only when used

        lines = brief(bundle, sys.stderr)
    except KeyboardInterrupt:
        click.echo("tf-collect: analysis skipped; the bundle is complete", err=True)
        return False
    except Exception as exc:  # the collection itself succeeded
        click.echo(
            f"tf-collect: could not analyze the bundle ({exc}); run tf-analyze on it", err=True
        )
        return True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("", err=True)
    for line in lines:
        click.echo(line, err=True, color=True)
    return True


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _hard_exit(code: int) -> None:
    # Worker threads may still be blocked in a request; the bundle is already cleaned up,
    # so do not wait for them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@main.command("redact")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="Where to write the redacted copy (a new path; of PATH's kind).",
)
@click.option(
    "--redaction-map",
    type=click.Path(path_type=Path),
    help="Also write original -> placeholder to this file (keep it private).",
)
@click.option("--redact-public-ips", is_flag=True, help="Pseudonymise public IP addresses too.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=default_workers(),
    show_default=True,
    help="Processes sharing a large input.",
)
def redact_command(
    path: Path, output: Path, redaction_map: Path | None, redact_public_ips: bool, workers: int
) -> None:
    """Redact an existing file, directory, .tar.gz or .tar.zst (a bundle, or any logs).

    The same engine as collection: a file gives a file, a directory a directory, an archive
    an archive of the same kind. PATH is never changed and OUT is never overwritten.
    """
    try:
        check_map_path(redaction_map, output)
        redactor = Redactor(key=key_from_env(), public_ips=redact_public_ips)
        result = redact_path(path, output, redactor, workers=workers)
        if redaction_map is not None:
            write_map(redaction_map, redactor, output)
    except InputError as exc:
        click.echo(f"tf-collect redact: {exc}", err=True)
        sys.exit(int(ExitCode.USAGE))
    except CollectError as exc:
        click.echo(f"tf-collect redact: {exc}", err=True)
        sys.exit(int(exc.exit_code))
    counts = result.summary.get("counts", {})
    what = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing"
    click.echo(
        f"Redacted {result.files} file(s){' of a tf-collect bundle' if result.bundle else ''}: "
        f"replaced {what}.",
        err=True,
    )
    for item in result.skipped:
        click.echo(f"  left out: {item}", err=True)
    click.echo(str(result.output))
