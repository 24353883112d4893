"""A targets count against what a whole walk lists: a count holds at one moment (`active_cases_at`),
and the cases' own dates, read from the service, say what changed since then."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from evalmock.contract.case_rules import instant
from evalmock.harness.checks.exchange import Exchange

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


def retired_at(case: dict[str, Any]) -> datetime | None:
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
    """A count stated at a moment, and what the cases' dates say changed after it."""

    stated: int
    at: datetime
    retired: tuple[Any, ...]  # active at the moment (added by then), retired after it
    added: tuple[Any, ...]  # added after the moment, active now

    @property
    def expected(self) -> int:
        return self.stated - len(self.retired) + len(self.added)

    def arithmetic(self, listed: int) -> str:
        """The count's sum as a finding says it: "60 active at T; 20 retired since, 3 added
        since; listed 42: one missing"."""
        moment = self.at.strftime("%Y-%m-%dT%H:%M:%SZ")
        said = (
            f"{self.stated} active at {moment}; {len(self.retired)} retired since, "
            f"{len(self.added)} added since; listed {listed}"
        )
        gap = self.expected - listed
        if gap == 0:
            return f"{said}: as the dates say"
        if gap > 0:
            return f"{said}: {'one' if gap == 1 else gap} missing"
        return f"{said}: {'one' if gap == -1 else -gap} more than the dates explain"


def since(stated: int, at: datetime, everything: Iterable[dict[str, Any]]) -> Since:
    """What changed after `at` among `everything` (each case of the list, retired ones too, as
    include=retired lists them): cases retired after it that were added by then, and cases added
    after it that are still active."""
    retired, added = [], []
    for case in everything:
        added_at, gone = instant(case.get("addedAt")), retired_at(case)
        if added_at is None:
            continue
        if added_at <= at and gone is not None and gone > at:
            retired.append(case.get("id"))
        elif added_at > at and case.get("retired") is None:
            added.append(case.get("id"))
    return Since(stated, at, tuple(retired), tuple(added))
