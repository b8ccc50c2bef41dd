"""TensorFusion's version numbers: one parser, one order (Semantic Versioning 2.0.0).

Git tags carry a `v` (v1.48.6), operator and hypervisor image tags do not (1.48.6), client and
worker images of the v2 era do again (v2.15.0); old hypervisor images add an architecture
(1.9.0_amd64). All of them read as the same version here. Two release lines ship interleaved
(v1.x maintenance and v2.x); a version's line is its major number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_VERSION = re.compile(
    r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:_[A-Za-z0-9]+)?"  # an image's architecture suffix: 1.9.0_amd64
)


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()  # 2.0.0-rc.1 -> ("rc", 1); empty for a release

    @property
    def line(self) -> str:
        """The release line: "v1" or "v2"."""
        return f"v{self.major}"

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after its pre-releases; numeric identifiers before alphanumeric
        # ones, numbers by value (semver.org, item 11).
        pre = tuple((0, p) if isinstance(p, int) else (1, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)


def parse(text: str | None) -> Version | None:
    """The version `text` names (an image tag, a git tag, a chart version), or None when it
    names none (`latest`, `main`, a digest, "")."""
    match = _VERSION.fullmatch((text or "").strip())
    if match is None:
        return None
    major, minor, patch, pre, _build = match.groups()
    ids = tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else ()
    return Version(int(major), int(minor), int(patch), ids)


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as version `a` is older than, the same as or newer than `b` (build metadata
    and the `v` prefix do not count). ValueError when either is not a version."""
    va, vb = parse(a), parse(b)
    if va is None or vb is None:
        raise ValueError(f"not a version: {a if va is None else b!r}")
    return (va > vb) - (va < vb)


def in_range(version: Version, low: str | None, high: str | None) -> bool:
    """Whether `version` is in the half-open range [low, high); None leaves that end open."""
    lo, hi = parse(low) if low else None, parse(high) if high else None
    return (lo is None or version >= lo) and (hi is None or version < hi)
