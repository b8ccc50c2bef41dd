"""The real tf-collect, run as a user runs it (its own process), against an emulated cluster:
how the tests, the sample bundles (scripts/make_samples.py) and the benchmarks make bundles."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .server import Emulator


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
