"""The analyzer's exceptions and exit codes (documented in README.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # report written; no finding at or above --fail-on
    FINDINGS = 1  # a finding at or above --fail-on severity
    USAGE = 2  # bad options (click's own code)
    RULES = 3  # a rule file is invalid
    OUTPUT = 4  # the report could not be written
    PORT = 5  # --serve could not listen on --port (in use, or not allowed)
    NOT_A_BUNDLE = 10  # not zstd, not tar, unreadable or empty
    TRUNCATED = 11  # the compressed stream or the tar ends early
    MANIFEST = 12  # manifest.json missing, not JSON or not matching its schema
    UNSUPPORTED = 13  # a format_version this analyzer does not read
    UNSAFE = 14  # absolute or '..' member paths, links, devices, duplicates
    TOO_LARGE = 15  # a member or the whole bundle is over the size cap (decompression bomb)


class AnalyzerError(Exception):
    exit_code = ExitCode.NOT_A_BUNDLE


class BundleError(AnalyzerError):
    """A bundle that cannot be read; the message says why in one line."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.NOT_A_BUNDLE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class RuleLoadError(AnalyzerError):
    """An invalid rule: names the file and the field."""

    exit_code = ExitCode.RULES


class OutputError(AnalyzerError):
    exit_code = ExitCode.OUTPUT


class PortError(AnalyzerError):
    exit_code = ExitCode.PORT
