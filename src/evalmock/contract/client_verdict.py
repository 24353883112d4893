"""The verdict of client rules over what an app sent: JSON-ready, for a mock session's verdict
route and the proxy's outputs (`client_rules.judge` applies the pages' rules).

- `VIOLATIONS`: a page rule is broken (or an inferred one, with `strict`);
- `INCOMPLETE`: nothing is broken, but the journal cannot speak for the app's traffic: it judged
  nothing (it is empty, or holds no request of an API's operation), or its oldest entries were
  dropped;
- `CONFORMS`: otherwise. Inferred findings are then warnings, listed with their level.

The rules of an API the traffic never called are left out (a note names the API), so an app of one
API is not told of the other's rules; a rule of a called API with nothing to judge is listed as not
judged, with why.

A finding says which request (its index in the journal as given, 0 the oldest kept; its time,
method, path and status), what the app sent and what the page asks. No finding holds a credential:
a journal keeps none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.client_outcomes import (
    ClientBreach,
    ClientRule,
    Journal,
    Kept,
    Unjudged,
    clipped,
)
from evalmock.contract.sources import Level
from evalmock.nouns import counted, noun_for

CONFORMS, VIOLATIONS, INCOMPLETE = "CONFORMS", "VIOLATIONS", "INCOMPLETE"
FAILED, WARNED = "failed", "warned"  # a finding's outcome: it fails the verdict, or only warns


@dataclass(frozen=True)
class ClientVerdict:
    """The verdict over one or more journals: each breach as a finding, the rules not judged and
    why, each rule's tally."""

    verdict: str
    findings: list[dict[str, Any]]
    not_judged: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    judged: int  # requests of an API's operation the rules read
    requests: int  # entries of the journals
    dropped: int
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict == VIOLATIONS

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "findings": self.findings,
            "notJudged": self.not_judged,
            "judged": self.judged,
            "requests": self.requests,
            "dropped": self.dropped,
            "rules": self.rules,
            "notes": self.notes,
        }


@dataclass
class _Judging:
    """The verdict as it is gathered, rule by rule."""

    findings: list[dict[str, Any]] = field(default_factory=list)
    not_judged: list[dict[str, Any]] = field(default_factory=list)
    tallies: list[dict[str, Any]] = field(default_factory=list)
    failing: bool = False


def judge_callers(
    callers: Sequence[tuple[Sequence[ClientExchange], int]],
    rules: Sequence[ClientRule],
    *,
    strict: bool = False,
) -> ClientVerdict:
    """Judge several callers' journals, each (requests, dropped) and each apart (a cursor is one
    caller's, a wait is one app's), by `rules` into one verdict; with more than one caller, each
    finding names its caller by number (1 = the first seen), never by its token. `strict`: an
    inferred rule's finding fails the verdict too, as a page rule's does."""
    journals = [Journal(tuple(exchanges), max(0, dropped)) for exchanges, dropped in callers]
    # a rule of an API the app never called has nothing to say: it is left out, and the note says
    # which APIs were not called (a rule of a called API with no occasion stays not judged)
    called = {exchange.api for journal in journals for exchange in journal.exchanges}
    judging = _Judging()
    for rule in rules:
        if rule.api in called:
            _judge_rule(rule, journals, judging, strict=strict)
    requests = sum(len(journal.exchanges) for journal in journals)
    judged = sum(1 for journal in journals for _ in journal.judged())
    dropped = sum(journal.dropped for journal in journals)
    notes = []
    if dropped:
        notes.append(
            f"the journal dropped its {dropped} oldest entries (it is bounded): what they held is "
            "not judged, and a cursor they may have given is not judged either"
        )
    if not requests:
        notes.append("the journal is empty: the app sent nothing, so nothing was judged")
    elif not judged:
        notes.append("no request of the journal is one of the APIs' operations: nothing was judged")
    not_called = list(dict.fromkeys(rule.api for rule in rules if rule.api not in called))
    if not_called:
        left_out = sum(rule.api not in called for rule in rules)
        notes.append(
            f"no request to {' or '.join(not_called)}: "
            f"{noun_for(len(not_called), 'its', plural='their')} "
            f"{counted(left_out, 'client rule')} {noun_for(left_out, 'is', plural='are')} "
            "left out"
        )
    if judging.failing:
        verdict = VIOLATIONS
    elif not judged or dropped:
        verdict = INCOMPLETE
    else:
        verdict = CONFORMS
    return ClientVerdict(
        verdict,
        judging.findings,
        judging.not_judged,
        judging.tallies,
        judged,
        requests,
        dropped,
        notes,
    )


def _judge_rule(
    rule: ClientRule, journals: list[Journal], judging: _Judging, *, strict: bool
) -> None:
    kept, breaches, unjudged = 0, 0, []
    outcome = FAILED if rule.level is Level.PAGE or strict else WARNED
    for number, journal in enumerate(journals, 1):
        for found in rule(journal):
            if isinstance(found, Kept):
                kept += 1
            elif isinstance(found, Unjudged):
                unjudged.append(found)
            else:
                breaches += 1
                finding = _finding(rule, found, journal.exchanges[found.index], outcome)
                if len(journals) > 1:
                    finding["request"]["caller"] = number
                judging.findings.append(finding)
    judging.failing |= breaches > 0 and outcome == FAILED
    level = str(rule.level)
    judging.tallies.append({"rule": rule.name, "level": level, "kept": kept, "broken": breaches})
    if unjudged:
        why = f"{counted(len(unjudged), 'occasion')} not judged: {unjudged[0].why}"
        judging.not_judged.append({"rule": rule.name, "level": level, "why": why})
    elif not kept and not breaches:
        judging.not_judged.append({"rule": rule.name, "level": level, "why": rule.needs})


def _finding(
    rule: ClientRule, breach: ClientBreach, exchange: ClientExchange, outcome: str
) -> dict[str, Any]:
    return {
        "rule": rule.name,
        "level": str(rule.level),
        "outcome": outcome,
        "request": {
            "index": breach.index,
            "at": _rfc3339(exchange.at),
            "method": exchange.method,
            "path": clipped(exchange.path),
            "status": exchange.status,
        },
        "problem": breach.problem,
        "expected": breach.expected,
        "received": breach.received,
        "message": f"{breach.problem}: expected {breach.expected}, received {breach.received}",
        "source": rule.source.describe(),
    }


def _rfc3339(at: float) -> str:
    try:
        return (
            datetime.fromtimestamp(at, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return str(at)
