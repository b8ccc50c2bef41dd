"""Driving the real CLIs over scenarios: collect one from the emulator, analyze a bundle.

Shared by the end-to-end tests so that each states only what it asserts.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from collector import cli
from emulator.collect import collect
from emulator.scenario import collect_args, load_scenario
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bundles"


def _load_make_samples():
    path = SAMPLES.parent / "scripts" / "make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The samples' fixed redaction key and clock: fresh bundles name things like committed ones.
SAMPLE_ENV: dict[str, str] = _load_make_samples().SAMPLE_ENV


def collect_scenario(
    name: str,
    tmp_path: Path,
    *extra: str,
    emulator: Emulator | None = None,
    analyze: bool = False,
    in_process: bool = False,
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, str]]:
    """Collect a scenario with the samples' key: the run, the bundle and its redaction map.
    `emulator` serves it instead of a fresh one (a test that injects faults first); `analyze`
    keeps the findings tf-collect shows at its end; `in_process` runs tf-collect's command in
    this process (its code, not its start-up: see collect_in_process)."""
    bundle = tmp_path / f"{name}.tar.zst"
    map_file = tmp_path / "redaction-map.json"
    args = ("--redaction-map", str(map_file), *collect_args(SAMPLES / name), *extra)
    with emulator or Emulator(load_scenario(SAMPLES / name)) as emu:
        if in_process:
            proc = collect_in_process(
                emu, bundle, *args, context=f"sample-{name}", env=SAMPLE_ENV, analyze=analyze
            )
        else:
            proc = collect(
                emu, bundle, *args, context=f"sample-{name}", env=SAMPLE_ENV, timeout=120,
                analyze=analyze,
            )  # fmt: skip
    mapping = json.loads(map_file.read_text())["map"] if map_file.exists() else {}
    return proc, bundle, mapping


def collect_in_process(
    emulator: Emulator,
    out: Path,
    *args: str,
    context: str,
    env: dict[str, str],
    analyze: bool = False,
) -> subprocess.CompletedProcess[str]:
    """What emulator.collect.collect does, with tf-collect's click command run in this process:
    the same options, output and exit code without a second of interpreter and client start-up
    per scenario. The command's signal handlers are put back afterwards."""
    shown = () if analyze else ("--no-analyze",)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = emulator.write_kubeconfig(Path(tmp) / "kubeconfig", context=context)
        argv = ["--kubeconfig", str(kubeconfig), "-o", str(out), *shown, *args]
        try:
            result = CliRunner().invoke(cli.main, argv, env=env, catch_exceptions=False)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return subprocess.CompletedProcess(argv, result.exit_code, result.stdout, result.stderr)


def analyze_json(bundle: Path, out: Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", str(bundle), "--format", "json", "-o", str(out),
         "--lang", "en", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def observed(report: dict[str, Any]) -> set[tuple[str, tuple[str, ...]]]:
    """(manual key, sorted objects) of every finding."""
    return {(key, tuple(sorted(f["objects"]))) for f in report["findings"] for key in f["manual"]}


def first_root(report: dict[str, Any]) -> str | None:
    roots = [f for f in report["findings"] if f["root_cause"]]
    return roots[0]["manual"][0] if roots else None
