"""A finding: one broken (or skipped) rule for one request shape, with a count and the first few
examples."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evalmock.contract.sources import Source
from evalmock.harness.checks.outcomes import SkipKind
from evalmock.harness.checks.registry import Check
from evalmock.harness.excerpts import clip


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
    # The words of the part of the rule this response broke, where the check's rule has many (the
    # document's schema: a required member, an allowed value); None: the check's own source.
    source: Source | None = None


# How long each value of a one-line statement may run: the line must still read as one.
STATED_VALUE = 120


def statement(example: Example) -> str:
    """What an example says, on one line, as the checks say it: its title, then the specific
    reason ("expected … received …", or the detail under the title) and where (the JSON pointer),
    each value clipped."""
    title, *details = [line.strip() for line in example.message.splitlines() if line.strip()]
    said = {
        label.lower(): clip(value.strip(), STATED_VALUE)
        for label, colon, value in (line.partition(":") for line in details)
        if colon and label.lower() in ("expected", "received")
    }
    if len(said) == 2:
        reason = f"expected {said['expected']}, received {said['received']}"
    else:
        reason = "; ".join(clip(line, STATED_VALUE) for line in details[:2])
    if example.pointer is not None and reason:
        reason += f" at {example.pointer or '/'}"
    return f"{title}: {reason}" if reason else title


def plainness(example: Example) -> tuple[int, int, int, int]:
    """How plain the request of an example is, the plainest least: one that names a request before
    one that does not, then the fewest headers its curl command sends (a `Prefer` asking a mock for
    an error is not what a plain client sends), the fewest query parameters, the shortest URL."""
    request = example.request
    if request is None:
        return (1, 0, 0, 0)
    headers = request.curl.count(" -H ")
    return (0, headers, request.url.count("&") + ("?" in request.url), len(request.url))


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
    title: str  # the first example's first line (for a skip: why)
    code: str | None = None  # Schemathesis's failure code (ST108, ...)
    count: int = 0
    examples: list[Example] = field(default_factory=list)

    @property
    def api(self) -> str:
        return self.check.api

    @property
    def source(self) -> Source:
        """Where the broken rule comes from: the words of the part the first example broke, where
        the check states them apart, else the check's whole source."""
        first = self.examples[0] if self.examples else None
        return first.source if first is not None and first.source is not None else self.check.source

    @property
    def stated(self) -> str:
        """The finding in one line: its first example's specific reason and how many more
        responses broke the rule the same way."""
        said = statement(self.examples[0]) if self.examples else self.title
        others = self.count - 1
        return f"{said} (and {others} more)" if others > 0 else said


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
