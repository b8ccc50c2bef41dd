"""Redaction: nothing secret leaves the cluster, everything useful stays.

`Redactor` is the engine (one per bundle, passed explicitly); `redact_path` runs it over an
existing file, directory or archive. See engine.py for the order of passes, names.py for
which field names are sensitive, addresses.py for the address-or-version rule and
pseudonyms.py for the placeholder formats.
"""

from __future__ import annotations

from .engine import KEY_ENV, Redactor, Structure, key_from_env

__all__ = ["KEY_ENV", "Redactor", "Structure", "key_from_env"]
