"""Every exit code of every evalmock command, and EvalmockError, the error family that carries
one."""

from __future__ import annotations

CONFORMS = 0  # an audit found the target conforming
OK = 0  # any other command succeeded
FAILED = 1  # any other command failed: a document invalid, a port it cannot listen on
VIOLATIONS = 1  # an audit found a rule broken
USAGE = 2  # bad options, a bad targets, data or HAR file, a token or caller the service refuses
UNREACHABLE = 3  # the target does not answer, or answers no audited API at its base URL
INCOMPLETE = 4  # an audit checked too little to say the target conforms
INTERRUPTED = 130  # stopped by Ctrl-C or SIGINT, as a shell counts it (128 + SIGINT)
# evalmock itself failed (sysexits' EX_SOFTWARE): never a verdict on the service
CRASHED = 70


class EvalmockError(Exception):
    """An error that ends a command: what went wrong, in words for the user, and the code it exits
    with."""

    exit_code = USAGE

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(EvalmockError):
    """Options or input files that cannot be used (exit code 2)."""
