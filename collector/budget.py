"""The size budget: bundles are meant to be emailed, so over `--max-size` the oldest log
lines go first. Objects, exec output and the manifest are never trimmed.

The compressed size of a member is estimated by compressing it alone (at a faster level than
the archive's, and without the archive's cross-file context, so the estimate is high and the
bundle lands under the budget). Logs are then cut to a common cap in compressed bytes, the
largest first: a short log of a crashing container keeps every line while a chatty one loses
its oldest lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tf_support_schemas.archive import zstd

from .errors import ConfigError

if TYPE_CHECKING:  # bundle.py imports this module
    from .bundle import BundleWriter

DEFAULT_MAX_SIZE = 20_000_000  # what every mail service and GitHub accept as an attachment
ESTIMATE_LEVEL = 3
# Room for the tar headers and the manifest, which grows with the number of artifacts.
HEADROOM = 0.05
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int | None:
    """`20MB`, `5MiB`, `500k` or plain bytes; `0` or `none` means no budget."""
    if text.strip().lower() in ("0", "none", "off", "unlimited"):
        return None
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ConfigError(
            f"--max-size {text!r}: give a size like 20MB, 5MiB or 800k (0 for no limit)"
        )
    size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size < 1:
        raise ConfigError(f"--max-size {text!r} is too small")
    return size


def estimate(data: bytes) -> int:
    """Compressed size of one member, a little high."""
    return len(zstd.compress(data, level=ESTIMATE_LEVEL)) if data else 0


@dataclass(frozen=True)
class LogSize:
    raw: int  # bytes staged
    compressed: int  # estimated


def plan_trim(fixed: int, logs: dict[str, LogSize], max_size: int) -> dict[str, int]:
    """Raw bytes each log may keep (only the logs that must shrink) so that the estimated
    bundle is within `max_size`; `fixed` is the estimate of everything that is never trimmed.

    One cap in compressed bytes for every log (water-filling): logs under the cap stay whole.
    """
    room = int(max_size * (1 - HEADROOM)) - fixed
    if sum(s.compressed for s in logs.values()) <= room:
        return {}
    room = max(room, 0)
    sizes = sorted(s.compressed for s in logs.values())
    cap, spent, left = 0, 0, len(sizes)
    for size in sizes:
        # Can every remaining log be cut to `size`? If not, the cap lies below it.
        if spent + size * left > room:
            cap = (room - spent) // left
            break
        spent += size
        left -= 1
    keep = {}
    for member, s in logs.items():
        if s.compressed > cap:
            ratio = s.raw / s.compressed if s.compressed else 1.0
            keep[member] = int(cap * ratio)
    return keep


def fit(writer: BundleWriter, artifacts: list[dict[str, Any]], max_size: int | None) -> None:
    """Over `max_size`, leave out the oldest lines of the largest staged logs, and record
    the trimming on their artifacts."""
    staged = writer.staged()
    if max_size is None or sum(staged.values()) <= max_size * (1 - HEADROOM):
        return  # even uncompressed it fits
    logs = {
        a["paths"][0]: a
        for a in artifacts
        if a["type"] == "log"
        and not a.get("head")  # a few lines that say what runs: kept like objects
        and len(a.get("paths") or ()) == 1
        and a["paths"][0] in staged
    }
    fixed = sum(estimate(writer.read_staged(m)) for m in staged if m not in logs)
    sizes = {m: LogSize(staged[m], estimate(writer.read_staged(m))) for m in logs}
    for member, max_bytes in sorted(plan_trim(fixed, sizes, max_size).items()):
        dropped = writer.trim_to_newest(member, max_bytes)
        if not dropped:
            continue
        art = logs[member]
        art["lines"] = max(0, art.get("lines", 0) - dropped)
        art["trimmed_lines"] = dropped
        note = f"oldest {dropped} lines left out to fit --max-size {max_size} bytes"
        art["message"] = f"{art['message']}; {note}" if art.get("message") else note
        if art["status"] == "ok":
            art["status"] = "truncated"


def newest_lines(data: bytes, max_bytes: int) -> tuple[bytes, int]:
    """The newest whole lines of `data` within `max_bytes`, and how many lines were dropped."""
    if len(data) <= max_bytes:
        return data, 0
    # The kept part starts right after a newline, at least len - max_bytes bytes in.
    nl = data.find(b"\n", len(data) - max_bytes - 1)
    start = len(data) if nl < 0 else nl + 1
    dropped = data[:start]
    partial = 1 if dropped and not dropped.endswith(b"\n") else 0
    return data[start:], dropped.count(b"\n") + partial
