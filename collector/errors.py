"""The collector's exceptions and exit codes (documented in README.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # bundle written, everything collected
    PARTIAL = 3  # bundle written, some artifacts could not be collected (see the summary)
    USAGE = 2  # bad options (click's own code)
    CONFIG = 4  # no usable kubeconfig / context / in-cluster config
    UNREACHABLE = 5  # the API server did not answer, or refused our credentials
    OUTPUT = 6  # the bundle could not be written where asked
    INTERRUPTED = 130  # SIGINT / SIGTERM: nothing left at the output path


class CollectError(Exception):
    """A failure that stops the run before a bundle exists."""

    exit_code = ExitCode.UNREACHABLE


class ConfigError(CollectError):
    exit_code = ExitCode.CONFIG


class UnreachableError(CollectError):
    exit_code = ExitCode.UNREACHABLE


class OutputError(CollectError):
    exit_code = ExitCode.OUTPUT


class Interrupted(CollectError):
    exit_code = ExitCode.INTERRUPTED
