"""Driving the real CLIs over scenarios: tf-collect run as a user runs it (its own process)
against an emulated cluster, and tf-analyze on the bundle it wrote.

How the tests, the sample bundles (scripts/make_samples.py) and the benchmarks make bundles,
so that each states only what it asserts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from scenarioloader import collect_args, load_scenario

from collector import cli
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bundles"
# A fixed creation time and a fixed redaction key keep regenerated sample bundles comparable,
# and let the tests map a scenario's real names to the pseudonyms in its bundle. Never use a
# fixed key for a real bundle: whoever knows it can reverse the address pseudonyms.
EPOCH = "1796033400"  # 2026-11-30T10:10:00Z
SAMPLE_KEY = "73616d706c652d62756e646c65732d6f6e6c792d6e6f742d7365637265742121"
SAMPLE_ENV = {"SOURCE_DATE_EPOCH": EPOCH, "TF_COLLECT_REDACTION_KEY": SAMPLE_KEY}


def command(*args: str) -> list[str]:
    """The argv of tf-collect with these arguments (for a caller that needs the process)."""
    return [sys.executable, "-m", "collector", *args]


def tf_collect(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, **run: Any
) -> subprocess.CompletedProcess[str]:
    """Run tf-collect to its end; `env` is added to this process's environment."""
    return subprocess.run(
        command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        **run,
    )


def collect(
    emulator: Emulator,
    out: Path,
    *args: str,
    context: str = "tf-emulated",
    env: dict[str, str] | None = None,
    timeout: float = 300,
    analyze: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Collect what `emulator` serves into the bundle `out`, through a kubeconfig for it
    (context `context`) that lasts as long as the run. The analysis tf-collect shows at its
    end is left out unless `analyze`: the callers analyze the bundle themselves."""
    shown = () if analyze else ("--no-analyze",)
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = emulator.write_kubeconfig(Path(tmp) / "kubeconfig", context=context)
        return tf_collect(
            "--kubeconfig", str(kubeconfig), "-o", str(out), *shown, *args, env=env,
            timeout=timeout,
        )  # fmt: skip


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
    """What `collect` does, with tf-collect's click command run in this process:
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
    """(manual key, sorted objects) of every finding; a known bug's is its rule id."""
    return {(key, tuple(sorted(f["objects"]))) for f in report["findings"] for key in keys(f)}


def keys(finding: dict[str, Any]) -> list[str]:
    """What an expectation names a finding by: its manual rows, or a known bug's rule id."""
    return finding["manual"] or [finding["rule_id"]]


def first_root(report: dict[str, Any]) -> str | None:
    roots = [f for f in report["findings"] if f["role"] != "consequence"]
    return keys(roots[0])[0] if roots else None
