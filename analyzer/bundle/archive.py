"""A bundle's members, read by the contract's archive reader (tf_support_schemas.archive,
where the size policy is documented), its refusals as BundleErrors with the reader's exit
codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tf_support_schemas.archive import DEFAULT_LIMITS, ArchiveError, Limits, Problem
from tf_support_schemas.archive import members as archive_members

from ..errors import BundleError, ExitCode

__all__ = ["DEFAULT_LIMITS", "Limits", "members"]

_CODES = {
    Problem.NOT_AN_ARCHIVE: ExitCode.NOT_A_BUNDLE,
    Problem.TRUNCATED: ExitCode.TRUNCATED,
    Problem.UNSAFE: ExitCode.UNSAFE,
    Problem.TOO_LARGE: ExitCode.TOO_LARGE,
}


def members(source: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[tuple[str, bytes]]:
    """The members of a ``.tar.zst`` bundle or an unpacked directory, in archive order."""
    try:
        yield from archive_members(source, limits)
    except ArchiveError as exc:
        raise BundleError(str(exc), _CODES[exc.problem]) from exc
