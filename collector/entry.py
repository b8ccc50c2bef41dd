"""The console entry point: Ctrl-C or SIGTERM while the program is still loading (the
Kubernetes client takes a moment to import) ends as quietly as one during collection."""

from __future__ import annotations

import os
import signal
import sys
import warnings

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
        sys.stderr.flush()
        # Not sys.exit: CPython remembers a KeyboardInterrupt that left code run by exec()
        # (dataclasses and namedtuples build their methods so) even once it is caught, and
        # then ends the process by SIGINT instead of with this exit code.
        os._exit(INTERRUPTED)
    # Only a kubeconfig's insecure-skip-tls-verify: true makes an unverified request, and
    # kubectl honours it without a word; urllib3 would warn on every request.
    from urllib3.exceptions import InsecureRequestWarning

    warnings.filterwarnings("ignore", category=InsecureRequestWarning)
    cli()
