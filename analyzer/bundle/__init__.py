"""Reading a bundle: its members read safely (archive.py) and loaded (loading.py) into the
data model rules and reports ask by name (model.py)."""

from .archive import DEFAULT_LIMITS, Limits
from .loading import OK_STATUSES, parse_json
from .model import Bundle, Coverage, ExecOutput, Log, Missing, ref

__all__ = [
    "DEFAULT_LIMITS",
    "OK_STATUSES",
    "Bundle",
    "Coverage",
    "ExecOutput",
    "Limits",
    "Log",
    "Missing",
    "parse_json",
    "ref",
]
