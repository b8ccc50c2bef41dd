"""The console entry point of tf-analyze."""

from __future__ import annotations

import gc


def main() -> None:
    # One short run builds a bundle's objects, which live until the process ends and hold no
    # cycles: the cyclic collector would only walk that growing heap again and again.
    gc.disable()
    from .cli import main as cli

    cli()
