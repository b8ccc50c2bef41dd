"""The collector's exceptions and exit codes (documented in README.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # bundle written, everything collected
    PARTIAL = 3  # bundle written, some artifacts could not be collected (see the summary)
    USAGE = 2  # bad options (click's own code)
    # Our own side: no usable kubeconfig / context / in-cluster config, credentials refused
    # (401, a client certificate refused or unusable), an exec credential plugin that fails.
    CONFIG = 4
    # The server or the way to it: no answer, a server certificate we do not trust (unknown
    # authority, expired, another name), a proxy that cannot be reached or says no.
    UNREACHABLE = 5
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
