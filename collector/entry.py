"""The console entry point: Ctrl-C or SIGTERM while the program is still loading (the
Kubernetes client takes a moment to import) ends as quietly as one during collection."""

from __future__ import annotations

import signal
import sys

INTERRUPTED = 130  # ExitCode.INTERRUPTED, without importing anything heavy first
MESSAGE = "tf-collect: interrupted; no bundle was written\n"


def terminate(*_: object) -> None:
    raise KeyboardInterrupt  # SIGTERM means the same as Ctrl-C: stop now, leave nothing


def main() -> None:
    signal.signal(signal.SIGTERM, terminate)
    try:
        from .cli import main as cli
    except KeyboardInterrupt:
        sys.stderr.write(MESSAGE)
        sys.exit(INTERRUPTED)
    cli()
