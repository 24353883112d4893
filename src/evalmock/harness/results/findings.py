"""A finding: one broken (or skipped) rule for one request shape, with a count and the first few
examples."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evalmock.harness.checks.outcomes import SkipKind
from evalmock.harness.checks.registry import Check


@dataclass(frozen=True)
class RequestRecord:
    """A request that shows a finding, already redacted, with its answer's status and a reproducing
    curl."""

    method: str
    url: str
    headers: dict[str, str]
    status: int | None
    curl: str


@dataclass(frozen=True)
class Example:
    """One response that broke a rule: what was expected and received, where (a JSON pointer), the
    request."""

    message: str
    request: RequestRecord | None = None
    pointer: str | None = None
    value: str | None = None  # the offending value, as JSON text, shortened
    skip: SkipKind | None = None  # for a skip: why, as the verdict reads it


def breach_kind(message: str) -> str:
    """What kind of breach a message states: its first line without the values in it (quoted text,
    numbers)."""
    title = message.split("\n", 1)[0]
    return _DIGITS.sub("#", _QUOTED.sub("''", title))


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_DIGITS = re.compile(r"\d+")


@dataclass
class Finding:
    """One broken (or skipped) rule for one request shape: how often, and the first few examples."""

    check: Check
    outcome: str  # FAILED, WARNED or SKIPPED
    shape: str  # "GET /v1/agents/{agentId}/test-set/cases ?limit&projectId -> 200"; "" for a skip
    title: str  # the first example's first line
    code: str | None = None  # Schemathesis's failure code (ST108, ...)
    count: int = 0
    examples: list[Example] = field(default_factory=list)

    @property
    def api(self) -> str:
        return self.check.api


@dataclass(frozen=True)
class Gap:
    """Work an audit could not do: its API, what it was (a request, said as sent), and what would
    let it be done (said once for every gap alike; empty when nothing the audit can change
    would)."""

    api: str
    what: str
    remedy: str = ""


def request_shape(method: str, operation_path: str, status: int | None) -> str:
    """What makes two requests "the same kind" for a finding: the method, the operation and the
    status answered (the parameters sent vary with every request of a walk or a fuzzer, and rarely
    change what a defect is)."""
    return f"{method.upper()} {operation_path} -> {status}"
