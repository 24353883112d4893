"""A list that moves while the audit reads it: what the walks and the comparisons of two requests
still judge, what they set aside in a note, and what they say they could not judge (the list
moved), never a failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind
from evalmock.harness.checks.policy import FAILED, PASSED, Policy
from evalmock.harness.results.audit_results import Results
from shared import LIMIT

from .builders import hand_case
from .test_scenario_judgements import audited_with

AGENT, PROJECT_ID = "acme.drafting", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
START = datetime(2026, 11, 20, tzinfo=UTC)


class MovingList:
    """`count` hand cases, newest first, one arriving at the top every `arrive_every` requests (0:
    never) and the oldest active retired every `retire_every` (0: never); a cursor holds the id of a
    page's last case. `full_has_more`: hasMore says whether the page is full."""

    def __init__(
        self,
        count: int,
        *,
        arrive_every: int = 0,
        retire_every: int = 0,
        full_has_more: bool = False,
    ) -> None:
        self.numbers = list(range(count, 0, -1))
        self.requests = 0
        self.arrive_every, self.retire_every = arrive_every, retire_every
        self.full_has_more = full_has_more

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.arrive_every and self.requests % self.arrive_every == 0:
            self.numbers.insert(0, self.numbers[0] + 1 if self.numbers else 1)
        if self.retire_every and self.requests % self.retire_every == 0:
            self.numbers.pop()
        params = request.url.params
        limit = int(params.get("limit") or LIMIT["default"])
        numbers = [] if params.get("kind") == "correction" else self.numbers
        cursor = params.get("cursor")
        rest = numbers if cursor is None else [n for n in numbers if n < int(cursor)]
        page = rest[:limit]
        more = len(page) == limit if self.full_has_more else len(rest) > limit
        body: dict[str, Any] = {"data": [_case(n) for n in page], "hasMore": more}
        if more:
            body["nextCursor"] = str(page[-1] if page else 0)
        return httpx.Response(200, json=body, headers={"x-request-id": "r"})


def _case(number: int) -> dict[str, Any]:
    stamp = (START + timedelta(minutes=number)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return hand_case(id=f"case-{number:05d}", addedAt=stamp, updatedAt=stamp)


def audited(check: str, handler: MovingList, **facts: Any) -> Results:
    targets = Targets(projects=(ProjectTarget(AGENT, PROJECT_ID, **facts),))
    return audited_with(check, targets, handler)


def status(results: Results, check: str) -> str:
    tally = next(t for t in results.rows() if t.check.name == check)
    return tally.outcome


def test_walks_of_a_list_in_use_pass_and_set_the_targets_count_aside() -> None:
    # the cases: arrivals every 7 requests, retirements, a targets count of another day
    for handler in (
        MovingList(60, arrive_every=7),
        MovingList(60, retire_every=3),
        MovingList(63, arrive_every=7, retire_every=5),
    ):
        results = audited("walk_yields_every_case_once", handler, active_cases=60)
        assert status(results, "walk_yields_every_case_once") == PASSED, results.failures
        [note] = results.notes
        assert "moved during the audit" in note
        assert "the targets' active_cases (60) was not compared" in note


def test_a_still_list_is_held_to_a_dated_count_its_dates_do_not_explain() -> None:
    # 60 active at a moment after every case was added, none retired: 63 listed is 3 unexplained
    at = START + timedelta(days=1)
    results = audited(
        "walk_yields_every_case_once", MovingList(63), active_cases=60, active_cases_at=at
    )
    assert status(results, "walk_yields_every_case_once") == FAILED
    [finding] = results.failures
    assert finding.title.startswith("in acme.drafting/")
    assert (
        "the walk did not list every active case: 60 active at 2026-11-21T00:00:00Z; "
        "0 retired since, 0 added since; listed 63: 3 more than the dates explain"
    ) in finding.title
    assert not results.notes


def test_a_still_list_explains_a_dated_count_by_the_cases_dates() -> None:
    # the count was taken when 60 cases had been added: the 3 newer ones were added since
    at = START + timedelta(minutes=60, seconds=30)
    results = audited(
        "walk_yields_every_case_once", MovingList(63), active_cases=60, active_cases_at=at
    )
    assert status(results, "walk_yields_every_case_once") == PASSED, results.failures
    [note] = results.notes
    assert (
        "the cases' own dates explain it (60 active at 2026-11-20T01:00:30Z; 0 retired since, "
        "3 added since; listed 63: as the dates say)"
    ) in note


def test_an_undated_count_the_still_walks_disagree_with_is_a_note_even_when_strict() -> None:
    for policy in (Policy(), Policy(strict=True)):
        targets = Targets(projects=(ProjectTarget(AGENT, PROJECT_ID, active_cases=60),))
        results = audited_with(
            "walk_yields_every_case_once", targets, MovingList(63), policy=policy
        )
        assert status(results, "walk_yields_every_case_once") == PASSED, results.failures
        [note] = results.notes
        assert "agree on 63 active cases; the targets' active_cases (60) was not compared" in note
        assert "may be stale" in note and "active_cases_at" in note


def test_first_pages_that_differ_on_a_moving_list_are_judged_by_whole_walks() -> None:
    # a case on every request: every two first pages differ; whole walks list every case both the
    # walk before and the walk after list
    for check in ("kind_filter_selects_those_kinds", "project_id_is_case_insensitive"):
        results = audited(check, MovingList(60, arrive_every=1), has_hand=True)
        assert status(results, check) == PASSED, [f.examples[0].message for f in results.findings]


def test_a_comparison_movement_leaves_unjudgeable_is_not_judged_with_that_reason() -> None:
    # walks of more than 2000 cases stop at their bound: nothing is left to compare
    results = audited(
        "kind_filter_selects_those_kinds", MovingList(2100, arrive_every=1), has_hand=True
    )
    assert not results.failures and not results.warnings
    [skip] = results.skips
    assert skip.examples[0].skip is SkipKind.MOVED
    assert skip.examples[0].message.startswith(MOVED_PREFIX)


def test_has_more_on_an_exactly_full_last_page_is_seen() -> None:
    # 60 cases: neither 25, the small limit (19) nor 100 divides 60; a walk at 30 ends full
    results = audited(
        "page_after_has_more_is_not_empty", MovingList(60, full_has_more=True), active_cases=60
    )
    assert [f.check.name for f in results.warnings] == ["page_after_has_more_is_not_empty"]
    assert "limit=30" in results.warnings[0].examples[0].request.url  # type: ignore[union-attr]


def test_a_first_page_that_ends_the_list_is_full_enough_whatever_the_targets_count() -> None:
    # 30 cases were retired since the targets were written: the page of 100 holds the 90 left
    for check in ("limit_fills_a_first_page", "default_limit_fills_a_first_page"):
        results = audited(check, MovingList(90, retire_every=1), active_cases=120)
        assert status(results, check) == PASSED, [f.title for f in results.findings]
    # a short first page that says more follow stays a breach: the mutation suite's default-limit-20


class OneArrival(MovingList):
    """A still list but for one case arriving on request `on`; `union_drops` cases left out of
    kind=correction,hand (a defect)."""

    def __init__(self, count: int, *, on: int, union_drops: int = 0) -> None:
        super().__init__(count)
        self.on, self.union_drops = on, union_drops

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.requests + 1 == self.on:
            self.numbers.insert(0, self.numbers[0] + 1)
        response = super().__call__(request)
        if self.union_drops and request.url.params.get("kind") == "correction,hand":
            body = response.json()
            body["data"] = body["data"][self.union_drops :]
            return httpx.Response(200, json=body, headers=response.headers)
        return response


def test_a_case_arriving_between_the_variant_and_the_plain_page_is_no_failure() -> None:
    # kind=hand (1), kind=correction (2), kind=correction,hand (3), then the plain page (4) gets a
    # case that arrived after the variant was read: the list moved, the filter did nothing wrong
    results = audited("kind_filter_selects_those_kinds", OneArrival(60, on=4), has_hand=True)
    assert status(results, "kind_filter_selects_those_kinds") == PASSED, [
        f.examples[0].message for f in results.failures
    ]
    # the same arrival beside a union that leaves a case out still fails
    defect = OneArrival(60, on=4, union_drops=1)
    results = audited("kind_filter_selects_those_kinds", defect, has_hand=True)
    assert status(results, "kind_filter_selects_those_kinds") == FAILED
