"""How a check ends when it does not pass: a Violation (expected against received) or a Skip (and why)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalmock.harness.exchange import Exchange

_UNSET: Any = object()
# What ends a word, where a shortened text may end: never inside a word, which may be a secret (a token, a cookie's
# value) that only its whole is redacted by. The redactor reads a cut word by the same class.
WORD_BREAK = r"\s\"',;:{}\[\]()<>&?#|"
_BETWEEN_WORDS = re.compile(f"[{WORD_BREAK}]")
ELLIPSIS = "…"  # what a shortened text ends with


class Violation(AssertionError):
    """A response that breaks one rule, with what the rule expects, what was received and where (a JSON pointer
    into the response body, when the breach is a value in it)."""

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
        lines = [self.message]
        if self.expected is not _UNSET:
            lines.append(f"expected: {show(self.expected)}")
        if self.received is not _UNSET:
            lines.append(f"received: {show(self.received)}")
        return "\n".join(lines)


class Skip(Exception):
    """A scenario that cannot run against this target, and why (a missing fact, an unhonoured probe)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


UNJUDGED_PREFIX = "could not judge: "
NO_TOKEN = "no token: pass --token, set EVALMOCK_TOKEN, or give [auth].token in the targets"  # a check needed one


class Unjudged(Skip):
    """A check that could not judge an exchange because another fact about it is reported elsewhere (an answer
    still throttled after waiting, reported once as the service's throttling)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"{UNJUDGED_PREFIX}{why}")
        self.why = why


SLOW_SERVICE = "A slow service: --request-timeout SECONDS waits longer for each answer"  # a request timed out


class Undone(Unjudged):
    """Part of the audit that could not be done, so the audit is incomplete: `why`, and `remedy`, what would let it
    be done, if anything."""

    def __init__(self, why: str, remedy: str = "") -> None:
        super().__init__(why)
        self.remedy = remedy


class NoAnswer(Undone):
    """A request that got no answer (no response within the timeout, a connection refused or cut): the service's
    slowness or failure, which no rule of the pages speaks about."""


class TurnedAway(Undone):
    """A request for what the targets say the audit's token reads, answered 403: the service (or a gateway before
    it) turned the caller away. The pages list no 403; for a caller without read any 4xx conforms, so the answer
    says the targets and the service disagree about the token's grants, which no rule of the pages judges."""

    def __init__(self, why: str) -> None:
        super().__init__(why, "A token that reads what the targets list (--token), the audit's address let through "
                              "the gateway, or the targets without what it may not read")

    @classmethod
    def of(cls, method: str, path: str, what: str) -> TurnedAway:
        """`method path`, asking for `what` ("a project", "a test case"), answered 403."""
        return cls(f"{method} {path} answered 403: the service, or a gateway before it, turned the audit's token away "
                   f"from {what} the targets say it reads (a status the pages do not list)")


TargetKey = tuple[str, str, str]  # (API, agent id, project id) or (API, test case uuid, ""), lower-case ids
TARGET_NAMES = {"test-set": "a project", "gradient": "a test case"}


def target_key(api: str, path_parameters: Mapping[str, Any], query: Mapping[str, Any]) -> TargetKey:
    """What a request of `api` asks for, as the targets name it (a project of an agent, a test case)."""
    if api == "test-set":
        project = query.get("projectId")
        project = project[0] if isinstance(project, list) and project else project
        return api, str(path_parameters.get("agentId", "")), str(project or "").lower()
    return api, str(path_parameters.get("test_case_uuid", "")).lower(), ""


def show(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, 600)


def as_json(value: Any, limit: int = 300) -> str:
    """A value as JSON text (so that "12345" and 12345 read differently), shortened to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, limit)


def clip(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` in at most `limit` characters, shortened with `ellipsis` where a word ends, so that no short word is
    cut: a secret shown in part would escape a redactor that knows the whole. A word longer than half the room is
    cut (the start of a long value says what it was); the redactor knows a cut secret by its start
    (`Redactor.text`)."""
    if len(text) <= limit:
        return text
    room = text[: limit - len(ellipsis)]
    if _BETWEEN_WORDS.match(text, len(room)):
        return room + ellipsis
    ends = [match.end() for match in _BETWEEN_WORDS.finditer(room)]
    cut = ends[-1] if ends else 0
    return (room[:cut] if cut >= len(room) // 2 else room) + ellipsis
