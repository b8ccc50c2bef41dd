"""The console entry point. The process ends as soon as its output is out: freeing a large
bundle's millions of objects one by one at interpreter exit took over a second of a
10,000-pod analysis, and the operating system takes the memory back at once."""

from __future__ import annotations

import os
import sys


def main() -> None:
    from .cli import main as cli

    try:
        cli()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is not None and not isinstance(code, int):  # sys.exit("message")
        print(code, file=sys.stderr)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away (a closed pipe): nothing more can be said
        code = code or 1
    os._exit(int(code or 0))
