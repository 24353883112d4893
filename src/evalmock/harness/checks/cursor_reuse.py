"""Cursors as clients use them beside each other: two walks of one list at once, and a page asked
again with the same cursor."""

from __future__ import annotations

import math
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.contract.targets import ProjectTarget
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import scenario_check
from evalmock.harness.checks.scenario import DEFAULT_TOKEN, MAX_WALK_CASES, Scenario, expect_page

_SEALED = on_test_set_page(
    "A runtime that seals cursors takes one only for the same list, filters and caller, within "
    "a day; otherwise 400 bad-input, and the list starts again without it.",
)
_AS_IT_CAME = on_test_set_page("Where the previous page ended: its nextCursor, as it came.")
TOGETHER_PAGES = 3  # the two page sizes reach about this many pages each, where the count is known
LARGEST: int = operation("test-set").parameters["limit"]["schema"]["maximum"]  # the largest page
TWICE_LIMIT = 2  # the page asked twice: a small one, so that a list of 3 cases has a cursor


class _Walker:
    """One walk of a project, a page at a time, beside others."""

    def __init__(self, s: Scenario, project: ProjectTarget, limit: int, token: Any, who: str):
        self.s, self.project, self.limit, self.token, self.who = s, project, limit, token, who
        self.cursor: str | None = None
        self.pages = self.seen = 0
        self.done = False

    def step(self) -> None:
        exchange = self.s.list_cases(
            self.project, limit=self.limit, cursor=self.cursor, token=self.token
        )
        if self.pages == 0 and self.token is not DEFAULT_TOKEN and exchange.status != 200:
            raise Skip(
                f"the second caller's first page was answered {exchange.status}: it cannot read "
                "the project, so no second caller walked it"
            )
        if self.cursor is not None and exchange.status != 200:
            self._refused(exchange)
        body = expect_page(exchange)
        self.pages += 1
        self.seen += len(body.get("data") or [])
        cursor = body.get("nextCursor")
        if (
            body.get("hasMore") is not True
            or not isinstance(cursor, str)
            or not cursor
            or self.seen >= MAX_WALK_CASES
        ):
            self.done = True
        self.cursor = cursor if isinstance(cursor, str) else None

    def _refused(self, exchange: Exchange) -> None:
        where = f"{self.project.agent_id}/{self.project.project_id}"
        raise Violation(
            f"two walks of {where} at once, page by page: the walk {self.who} was refused its "
            f"page {self.pages + 1}, asked with the nextCursor its own page {self.pages} gave (a "
            "cursor that another walk's request made stale)",
            expected="200 with the page that cursor points at",
            received=f"{exchange.status} {exchange.excerpt(300)}",
            exchange=exchange,
        )


def _at_once(walkers: list[_Walker]) -> None:
    """Each walker's next page in turn, until each has walked to its list's end (or its bound)."""
    while not all(w.done for w in walkers):
        for walker in walkers:
            if not walker.done:
                walker.step()


def together_limits(project: ProjectTarget) -> tuple[int, int]:
    """Two page sizes that walk the project in a few pages each, where its count is known."""
    count = project.active_cases if project.active_cases is not None else LARGEST * TOGETHER_PAGES
    first = min(LARGEST, max(2, math.ceil(count / TOGETHER_PAGES)))
    return first, first - 1


_TOGETHER = page(
    _AS_IT_CAME,
    _SEALED,
    reading="Each page's nextCursor leads to the next page of its own walk, whatever other walks "
    "of the list ask meanwhile: a cursor is bound to its list, filters and caller, within a day, "
    "and to nothing else (such as being the latest one issued).",
)


@scenario_check("test-set", _TOGETHER)
def two_walks_at_once_each_reach_the_end(s: Scenario) -> None:
    """Two walks of the first project at two page sizes, interleaved page by page (a page of one,
    then a page of the other), each follow their own nextCursor to the last page: no cursor is
    refused because the other walk asked for a page meanwhile."""
    project = s.project()
    first, second = together_limits(project)
    _at_once(
        [
            _Walker(s, project, first, DEFAULT_TOKEN, f"with limit={first}"),
            _Walker(s, project, second, DEFAULT_TOKEN, f"with limit={second}"),
        ]
    )


@scenario_check("test-set", _TOGETHER)
def two_callers_walking_at_once_each_reach_the_end(s: Scenario) -> None:
    """The audit's caller and the second caller walk the first project at one page size,
    interleaved page by page, each to the last page: no caller's cursor is refused because the
    other caller asked for a page meanwhile."""
    project = s.project()
    if not s.second_token:
        raise Skip(
            "the targets name no second_token: a second caller walks the list beside the first"
        )
    limit, _ = together_limits(project)
    _at_once(
        [
            _Walker(s, project, limit, DEFAULT_TOKEN, "of the audit's caller"),
            _Walker(s, project, limit, s.second_token, "of the second caller"),
        ]
    )


@scenario_check(
    "test-set",
    inferred(
        "GET is safe and idempotent (RFC 9110 9.2.1-2): a client that got no answer, after a "
        "network error or a timeout, sends the same request again. The page lists why a cursor is "
        "refused (another list, filters or caller; older than a day), and having been used is not "
        "one of them: a cursor taken once is taken again, for the same page.",
        _SEALED,
        _AS_IT_CAME,
    ),
)
def same_cursor_twice_gets_a_page_twice(s: Scenario) -> None:
    """A page of the first project asked with a nextCursor, then asked again with the same cursor
    (as a client retrying after a network error does), is a 200 page both times."""
    project = s.project()
    body = s.page(project, limit=TWICE_LIMIT)
    cursor = body.get("nextCursor")
    if body.get("hasMore") is not True or not isinstance(cursor, str) or not cursor:
        raise Skip(f"the first page at limit={TWICE_LIMIT} has no nextCursor: nothing to ask twice")
    once = s.list_cases(project, limit=TWICE_LIMIT, cursor=cursor)
    if once.status != 200:
        raise Skip(
            f"the cursor was refused the first time ({once.status}): that is the walks' finding "
            "(walk_yields_every_case_once), not a retry's"
        )
    again = s.list_cases(project, limit=TWICE_LIMIT, cursor=cursor)
    if again.status != 200:
        raise Violation(
            "the same cursor, sent again for the same page, was refused the second time",
            expected="200 with the page that cursor points at, as the first time",
            received=f"{again.status} {again.excerpt(300)}",
            exchange=again,
        )
    expect_page(again)
