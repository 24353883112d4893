"""The independent service's main project as a list in use during the audit: cases arrive at its top
and are retired while the audit reads it, its targets' count is a day old, cases tied on addedAt
are ordered by id and cursors hold (addedAt, id). Named motions say how it moves (each allowed by
the pages); named defects are the classic paging bugs that stay bugs on a moving list."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from .service_data import CALLERS, CASES, DRAFTING, MAIN_PROJECT, START, Case, _expect

TEST_SET = (
    "000_f4434837f5b13534.txt"  # the test-set page's seed file, as independent_service names it
)
ARRIVE_EVERY = 7  # arrivals_now_and_then: a new case every this many list requests of the project
RETIRE_EVERY = 5  # retirements: a case retired every this many list requests of the project
MAX_RETIRED = 30  # retirements stop here: the project keeps more than 25 active cases
STALE = 3  # stale_counts: cases the targets file does not know of yet
ARRIVALS_FROM = START + timedelta(days=60)  # after every stored case: arrivals come at the top
# When the stored data's counts hold (after every stored date, before any arrival): a targets file's
# active_cases_at
COUNTED_AT = ARRIVALS_FROM - timedelta(days=1)
RETIRED_EARLY = 20  # retired_early: this many cases, one on each of the first list requests

MOTIONS: dict[str, str] = {
    "arrivals_now_and_then": f'{TEST_SET}:12 "newest added first"; no sentence promises a list '
    "that stands still: a new case arrives at the top every 7th list request of the project.",
    "arrivals_every_request": f"{TEST_SET}:12, as above: a new case on every list request.",
    "retirements": f'{TEST_SET}:12 "A retired case comes back only with include=retired.": a '
    "case is retired every 5th list request (30 at most).",
    "stale_counts": f"{TEST_SET} states no count: the targets file's active_cases is a day old, "
    "the project holds 3 cases more.",
    "retired_early": f'{TEST_SET}:12 "A retired case comes back only with include=retired."; no '
    "sentence promises a list that stands still: the first 20 list requests of the project each "
    "retire a case, dated then (the service's clock), most of them while Schemathesis runs, before "
    "the first walk.",
}
DEFECTS: dict[str, str] = {
    "cursor_on_added_at_alone": f'{TEST_SET}:47 "Where the previous page ended": the cursor '
    "holds addedAt only, so the tied neighbours of a page's last case not yet listed are skipped.",
    "ties_in_new_order": "cases tied on addedAt come in a new order on every request, the cursor "
    "still on (addedAt, id): a tie cut by a page's end is skipped or repeated.",
    "offset_cursor": "the cursor is an offset: a case arriving at the top shows the previous "
    "page's last case again on the next page (a case twice in one walk).",
    "loses_a_case": f'{TEST_SET}:12 "newest added first" lists every case: one active case is '
    "never listed, with or without include=retired, by any walk (every walk agrees).",
}
# With each motion and defect: ties on addedAt (pairs of cases), ordered by id, as moving lists do.
TIES = "equal_added_at"


class MovingList:
    """The main project's cases as they stand, moved by each list request of it."""

    def __init__(
        self,
        motions: Iterable[str] = (),
        defects: Iterable[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self.motions, self.defects = frozenset(motions), frozenset(defects)
        unknown = (self.motions - MOTIONS.keys()) | (self.defects - DEFECTS.keys())
        if unknown:
            raise ValueError(f"unknown motions or defects: {sorted(unknown)}")
        self.cases = {
            c.number: c for c in CASES if (c.agent, c.project) == (DRAFTING, MAIN_PROJECT)
        }
        self.requests = self.arrived = self.retired = 0
        for _ in range(STALE if "stale_counts" in self.motions else 0):
            self._arrive()

    def stored(self, agent: str, project: str) -> list[Case]:
        """The cases of a project as they stand; a request for the main project moves it first."""
        if (agent, project) != (DRAFTING, MAIN_PROJECT):
            return [c for c in CASES if (c.agent, c.project) == (agent, project)]
        self.requests += 1
        if "arrivals_every_request" in self.motions or (
            "arrivals_now_and_then" in self.motions and self.requests % ARRIVE_EVERY == 0
        ):
            self._arrive()
        if "retirements" in self.motions and self.requests % RETIRE_EVERY == 0:
            self._retire()
        if "retired_early" in self.motions and self.requests <= RETIRED_EARLY:
            self._retire(datetime.fromtimestamp(self.clock(), UTC))
        listed = list(self.cases.values())
        if "loses_a_case" in self.defects:
            lost = min(n for n, c in self.cases.items() if c.retired is None)
            listed = [c for c in listed if c.number != lost]
        return listed

    def _arrive(self) -> None:
        self.arrived += 1
        number = 10_000 + self.arrived
        self.cases[number] = Case(
            number=number,
            agent=DRAFTING,
            project=MAIN_PROJECT,
            kind="hand" if self.arrived % 3 == 0 else "correction",
            run=f"run-{number:05d}",
            made_on=f"{DRAFTING}@2026.12.{self.arrived % 5}",
            expect=_expect(number),
            added_by=CALLERS["fair-user"],
            # 6 hours apart: an odd-numbered case is shown 5 hours earlier (its tie with the case
            # before it), and still lands above every case before it
            added_at=ARRIVALS_FROM + timedelta(hours=6 * self.arrived),
            retired=None,
            expert=self.arrived % 3 == 0,
        )

    def _retire(self, at: datetime | None = None) -> None:
        """Retire a stored case, at `at` (else two days after it was added)."""
        active = sorted(n for n, c in self.cases.items() if c.retired is None and n < 10_000)
        if self.retired >= MAX_RETIRED or not active:
            return
        number = active[(self.retired * 13 + 7) % len(active)]
        self.retired += 1
        case = self.cases[number]
        at = at or case.added_at + timedelta(days=2)
        retirement = ("Retired during the audit.", CALLERS["fair-user"], at)
        self.cases[number] = dataclasses.replace(case, retired=retirement)

    def window(
        self,
        listed: list[Case],
        position: int | list[str] | None,
        limit: int,
        added: Callable[[Case], datetime],
        ident: Callable[[Case], str],
    ) -> tuple[list[Case], bool, int | list[str]]:
        """A page of `listed` after `position` (a cursor's (addedAt, id), or an offset): its cases,
        hasMore, and the position its nextCursor holds. Newest added first, ties by id."""
        order = sorted(listed, key=lambda c: (added(c), ident(c)), reverse=True)
        if "ties_in_new_order" in self.defects:
            shuffle = random.Random(self.requests).random
            order.sort(key=lambda c: (added(c), shuffle()), reverse=True)
        if isinstance(position, int) or "offset_cursor" in self.defects:
            start = position if isinstance(position, int) else 0
            rest = order[start:]
            page = rest[:limit]
            return page, len(rest) > limit, start + limit
        rest = (
            order
            if position is None
            else [c for c in order if self._after(c, position, added, ident)]
        )
        page = rest[:limit]
        last = page[-1] if page else None
        key = [added(last).isoformat(), ident(last)] if last else list(position or [])
        return page, len(rest) > limit, key

    def _after(
        self,
        case: Case,
        position: list[str],
        added: Callable[[Case], datetime],
        ident: Callable[[Case], str],
    ) -> bool:
        at = datetime.fromisoformat(position[0])
        if "cursor_on_added_at_alone" in self.defects:
            return added(case) < at
        return (added(case), ident(case)) < (at, position[1])
