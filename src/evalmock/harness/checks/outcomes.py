"""How a check ends when it does not pass: a Violation (expected against received) or a Skip (and
why)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from evalmock import environment
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.excerpts import printable, show

_UNSET: Any = object()


class Violation(AssertionError):
    """A response that breaks one rule, with what the rule expects, what was received and where (a
    JSON pointer into the response body, when the breach is a value in it)."""

    def __init__(
        self,
        message: str,
        *,
        expected: Any = _UNSET,
        received: Any = _UNSET,
        exchange: Exchange | None = None,
        pointer: str | None = None,
    ) -> None:
        self.message = message
        self.expected = expected
        self.received = received
        self.exchange = exchange  # the request that shows the violation, when not the last one made
        self.pointer = pointer
        super().__init__(self.render())

    @property
    def value(self) -> Any:
        """The offending value: what was received."""
        return None if self.received is _UNSET else self.received

    def render(self) -> str:
        # each value on its own line, its line breaks escaped: a value cannot fake a line of its own
        lines = [self.message]
        if self.expected is not _UNSET:
            lines.append(f"expected: {printable(show(self.expected))}")
        if self.received is not _UNSET:
            lines.append(f"received: {printable(show(self.received))}")
        return "\n".join(lines)


class SkipKind(Enum):
    """Why a check was skipped, as the verdict reads it."""

    MISSING = "missing"  # a fact or a feature the target lacks: the check cannot run there
    NO_TOKEN = (
        "no token"  # the audit had no token: only the answers to requests without one were judged
    )
    # an answer the check could not judge, reported elsewhere (throttling, an undone part)
    UNJUDGED = "unjudged"
    # the list moved during the audit (cases arrived or were retired), so a comparison of two of
    # its readings proves nothing: not judged, and no gap of the audit (the service may be in use)
    MOVED = "moved"


class Skip(Exception):
    """A scenario that cannot run against this target, and why (a missing fact, an unhonoured
    probe)."""

    kind = SkipKind.MISSING

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


UNJUDGED_PREFIX = "could not judge: "
MOVED_PREFIX = "not judged: the list moved during the audit: "
# a check needed one
NO_TOKEN = f"no token: pass --token, set {environment.TOKEN}, or give [auth].token in the targets"


class NoToken(Skip):
    """A check that needs the audit's token, which it was not given."""

    kind = SkipKind.NO_TOKEN

    def __init__(self) -> None:
        super().__init__(NO_TOKEN)


class Unjudged(Skip):
    """A check that could not judge an exchange because another fact about it is reported elsewhere
    (an answer still throttled after waiting, reported once as the service's throttling)."""

    kind = SkipKind.UNJUDGED

    def __init__(self, why: str) -> None:
        super().__init__(f"{UNJUDGED_PREFIX}{why}")
        self.why = why


class Moved(Skip):
    """A comparison of two readings of a list that the list's movement during the audit leaves
    unjudgeable (cases arrived or were retired between them): never a failure, never a pass."""

    kind = SkipKind.MOVED

    def __init__(self, why: str) -> None:
        super().__init__(f"{MOVED_PREFIX}{why}")
        self.why = why


SLOW_SERVICE = (
    "A slow service: --request-timeout SECONDS waits longer for each answer"  # a request timed out
)


class Undone(Unjudged):
    """Part of the audit that could not be done, so the audit is incomplete: `why`, and `remedy`,
    what would let it be done, if anything."""

    def __init__(self, why: str, remedy: str = "") -> None:
        super().__init__(why)
        self.remedy = remedy


class NoAnswer(Undone):
    """A request that got no answer (no response within the timeout, a connection refused or cut):
    the service's slowness or failure, which no rule of the pages speaks about."""


class Unread(Undone):
    """An answer the audit did not read whole: past one of its limits (the body's size, the header
    block, the time for the whole answer). What it says is unknown, so no rule judges it."""


def not_read(request: str, status: int, why: str) -> str:
    """What the audit says of an answer it did not read: which request, its status, and why."""
    return f"{request} answered {status} and was not read: {why}"


class TurnedAway(Undone):
    """A request for what the targets say the audit's token reads, answered 403: the service (or a
    gateway before it) turned the caller away. The pages list no 403; for a caller without read any
    4xx conforms, so the answer says the targets and the service disagree about the token's grants,
    which no rule of the pages judges."""

    def __init__(self, why: str) -> None:
        super().__init__(
            why,
            "A token that reads what the targets list (--token), the audit's address let through "
            "the gateway, or the targets without what it may not read",
        )

    @classmethod
    def of(cls, method: str, path: str, what: str) -> TurnedAway:
        """`method path`, asking for `what` ("a project", "a test case"), answered 403."""
        return cls(
            f"{method} {path} answered 403: the service, or a gateway before it, turned the "
            "audit's token away "
            f"from {what} the targets say it reads (a status the pages do not list)"
        )


def json_body(exchange: Exchange) -> Any:
    """The exchange's body as JSON; a body that is not JSON is itself a violation, one nested too
    deep to read leaves the check undone (Unread)."""
    ok, value = exchange.parsed
    if exchange.unread is not None:
        raise Unread(
            not_read(f"{exchange.method} {exchange.path}", exchange.status, exchange.unread)
        )
    if not ok:
        raise Violation(
            f"{exchange.method} {exchange.path} answered {exchange.status} with a body that is "
            "not JSON",
            expected="a JSON body",
            received=exchange.excerpt() or "(empty body)",
        )
    return value
