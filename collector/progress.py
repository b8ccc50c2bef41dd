"""Progress display: a live bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import threading
import time
from typing import IO, Any


class PlainProgress:
    """One line per finished step group, no escape codes (logs, CI, pipes)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.last_print = 0.0

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def update(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        with self.lock:
            # At most a few lines a second: large clusters have thousands of steps.
            if done == total or now - self.last_print > 1.0:
                self.last_print = now
                print(f"[{done}/{total}] {label}", file=self.stream, flush=True)


class RichProgress:
    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("collecting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=Console(file=stream),
            transient=True,
        )
        self.task = self.progress.add_task("", total=None)

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def update(self, label: str, done: int, total: int) -> None:
        self.progress.update(self.task, completed=done, total=total, description=label[:60])


def make_progress(stream: IO[str]) -> PlainProgress | RichProgress:
    return RichProgress(stream) if stream.isatty() else PlainProgress(stream)
