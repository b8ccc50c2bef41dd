"""Every call of a collection run ends as one artifact with a status: the run's ledger.

A job is one call (a list, a log read, a command in a container). `Ledger.attempt` runs its
work and turns any `CallFailed` into the artifact's status, so one failing call never stops
the run. The ledger also counts jobs for the progress display and holds the run's overall
deadline, past which no call starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .kube import CallFailed
from .plan import scope_of_id

Job = Callable[[], None]
ProgressFn = Callable[[str, int, int], None]  # (what just finished, done, total)


def artifact_id(*parts: str) -> str:
    return ":".join(p for p in parts if p) or "artifact"


@dataclass
class Ledger:
    progress: ProgressFn
    deadline: float | None = None  # on the time.monotonic() clock
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    done: int = 0
    total: int = 0  # jobs planned so far; grows as each phase plans its jobs

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def attempt(self, art: dict[str, Any], label: str, work: Callable[[], None]) -> None:
        """Run one call, turning every failure into the artifact's status."""
        art.setdefault("paths", [])
        art.setdefault("scope", scope_of_id(art["step"]))
        t0 = time.monotonic()
        try:
            if self.expired():
                raise CallFailed("timeout", "the overall --timeout was reached before this call")
            work()
            art.setdefault("status", "ok")
        except CallFailed as exc:
            art.update(status=exc.status, message=exc.message)
        art["duration_ms"] = int((time.monotonic() - t0) * 1000)
        art.setdefault("message", "")
        self.artifacts.append(art)
        self.done += 1
        self.progress(label, self.done, self.total)
