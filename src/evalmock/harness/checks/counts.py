"""A targets count against what a whole walk lists: a count holds at one moment (`active_cases_at`),
and the cases' own dates, read from the service, say what changed since then."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from evalmock.contract.case_rules import instant
from evalmock.contract.targets import ProjectTarget, rfc3339
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Violation
from evalmock.harness.checks.scenario import Scenario, Walk
from evalmock.harness.checks.walk_pages import WalkLedger

# A Date header is in whole seconds: a case dated within one second after it may precede it.
DATE_RESOLUTION = timedelta(seconds=1)


def service_time(exchange: Exchange) -> datetime | None:
    """When the service answered, on its own clock (its Date header, RFC 9110 6.6.1), or None."""
    value = exchange.header("date")
    if not value or len(value) > 64:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return moment if moment.tzinfo is not None else None


def retired_at(case: Mapping[str, Any]) -> datetime | None:
    retired = case.get("retired")
    return instant(retired.get("at")) if isinstance(retired, dict) else None


def dated_between(
    cases: Iterable[dict[str, Any]], start: datetime | None, end: datetime | None
) -> list[Any]:
    """The ids of cases added or retired between `start` and `end` (the service's clock): a list
    that such a case is in moved while it was read. None of them without both moments."""
    if start is None or end is None:
        return []
    found: dict[Any, None] = {}
    for case in cases:
        for moment in (instant(case.get("addedAt")), retired_at(case)):
            if moment is not None and start <= moment <= end + DATE_RESOLUTION:
                found[case.get("id")] = None
    return list(found)


@dataclass(frozen=True)
class Since:
    """A count stated at a moment, and how many cases the cases' dates say changed after it."""

    stated: int
    at: datetime
    retired: int  # active at the moment (added by then), retired after it
    added: int  # added after the moment, active now

    @property
    def expected(self) -> int:
        return self.stated - self.retired + self.added

    def arithmetic(self, listed: int) -> str:
        """The count's sum as a finding says it: "60 active at T; 20 retired since, 3 added
        since; listed 42: one missing"."""
        moment = self.at.strftime("%Y-%m-%dT%H:%M:%SZ")
        said = (
            f"{self.stated} active at {moment}; {self.retired} retired since, "
            f"{self.added} added since; listed {listed}"
        )
        gap = self.expected - listed
        if gap == 0:
            return f"{said}: as the dates say"
        if gap > 0:
            return f"{said}: {'one' if gap == 1 else gap} missing"
        return f"{said}: {'one' if gap == -1 else -gap} more than the dates explain"


RETIRED_SINCE, ADDED_SINCE = "retired", "added"


def change_since(case: Mapping[str, Any], at: datetime) -> str | None:
    """What a case's dates say of it after `at`: RETIRED_SINCE (active at `at`, retired after
    it), ADDED_SINCE (added after it, active now), or None (neither, or no addedAt to tell)."""
    added_at = instant(case.get("addedAt"))
    if added_at is None:
        return None
    gone = retired_at(case)
    if added_at <= at and gone is not None and gone > at:
        return RETIRED_SINCE
    if added_at > at and case.get("retired") is None:
        return ADDED_SINCE
    return None


def since(stated: int, at: datetime, everything: Iterable[dict[str, Any]]) -> Since:
    """What changed after `at` among `everything` (each case of the list, retired ones too, as
    include=retired lists them)."""
    changes = Counter(change_since(case, at) for case in everything)
    return Since(stated, at, changes[RETIRED_SINCE], changes[ADDED_SINCE])


def judge_the_count(
    s: Scenario,
    project: ProjectTarget,
    ledger: WalkLedger,
    walk: Walk,
    start: datetime | None,
    limit: int,
) -> None:
    """The targets' count against a whole walk of a list that stood still while it was walked. A
    count without its moment may be stale: a difference is said, never failed. A dated one is
    explained by the cases' own dates (include=retired lists them all); what they do not explain
    fails. `start`: when the walks began, on the service's clock; `limit`: the page size of the walk
    with include=retired."""
    where = f"{project.agent_id}/{project.project_id}"
    stated, at = project.active_cases, project.active_cases_at
    if stated is None or not ledger.whole or ledger.distinct == stated:
        return
    listed = ledger.distinct
    if at is None:
        s.notes.append(
            f"The walks of {where} agree on {listed} active cases; the targets' active_cases "
            f"({stated}) was not compared: it does not say when it was counted, so it may be "
            "stale. Stating that moment (active_cases_at, as evalmock serve --write-targets "
            "writes it) lets the audit explain the difference by the cases' own dates, or fail "
            "it; so does updating the count."
        )
        return
    why_not = f"the targets' active_cases ({stated} at {rfc3339(at)}) was not compared with the "
    try:
        everything = s.walk(project, limit=limit, include="retired", again=True)
    except Violation:  # include=retired's own rules judge that answer
        s.notes.append(f"In {where}, {why_not}{listed} listed: include=retired gave no page.")
        return
    end = service_time(everything.exchanges[-1])
    active = {case.get("id") for case in everything.cases if case.get("retired") is None}
    if (
        not everything.complete
        or active != set(walk.ids)
        or dated_between(everything.cases, start, end)
    ):
        s.notes.append(
            f"In {where}, {why_not}{listed} listed: the list moved while the cases' dates were "
            "read (include=retired listed other active cases, or cases dated meanwhile), or that "
            "walk stopped at its bound."
        )
        return
    counted = since(stated, at, everything.cases)
    if counted.expected != listed:
        raise Violation(
            f"in {where}, the walk did not list every active case: {counted.arithmetic(listed)}",
            expected=f"{counted.expected} cases",
            received=f"{listed} cases",
            exchange=walk.exchanges[-1],
        )
    s.notes.append(
        f"In {where}, the walks list {listed} active cases, the targets' active_cases {stated}: "
        f"the cases' own dates explain it ({counted.arithmetic(listed)})."
    )
