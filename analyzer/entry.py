"""The console entry point of tf-analyze."""

from __future__ import annotations


def main() -> None:
    from .cli import main as cli

    cli()
