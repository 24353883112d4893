"""The targets' count of a list, judged from traffic (the proxy's, a HAR file's) only where the list
stood still and the count says when it was counted: a list that moved while it was used, or was
walked whole once, or a count without its moment, is said not judged with its reason (no failure,
no pass); a dated count is explained by the cases' own dates (added since, from the walk; retired
since, from a whole include=retired walk in the same traffic), and a service that leaves a case out
of every walk still fails."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind
from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.harness.traffic.walks import WalkBounds
from valid import retirement

from .builders import PROJECT, page
from .test_har import entry, write_har
from .test_traffic_walks import TOKEN, audit, case, listed

RULE = "walk_yields_every_case_once"
WHERE = f"acme.drafting/{PROJECT}"


# After every case of `case(n)` was added (10:00-10:59), before any of `retired_case`'s retirements
AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def counted(active: int, at: datetime | None = None) -> TrafficAudit:
    project = ProjectTarget("acme.drafting", PROJECT, active_cases=active, active_cases_at=at)
    return audit(Targets(projects=(project,)))


def retired_case(number: int, at: str = "2026-11-20T13:00:00Z") -> dict[str, Any]:
    """Case `number`, retired at `at` (after AT unless told)."""
    return {**case(number), "retired": retirement(at), "updatedAt": at}


def everything(cases: list[dict[str, Any]], name: str) -> list[Exchange]:
    """A whole walk with include=retired of two pages: the first three cases, then the rest."""
    pages = [
        page(cases[:3], has_more=True, next_cursor=f"{name}-1", include="retired"),
        page(cases[3:], include="retired", cursor=f"{name}-1"),
    ]
    sent = {"authorization": f"Bearer {TOKEN}"}
    return [dataclasses.replace(answer, request_headers=sent) for answer in pages]


def walk(cases: list[int], name: str) -> list[Exchange]:
    """A whole walk of two pages: the first three cases, then the rest."""
    return [
        listed(cases[:3], next_cursor=f"{name}-1"),
        listed(cases[3:], cursor=f"{name}-1"),
    ]


def judged(traffic: TrafficAudit, *walks: list[Exchange]) -> list[tuple[str, str]]:
    return [
        (breach.check.name, breach.example.message.splitlines()[0])
        for exchanges in walks
        for exchange in exchanges
        for breach in traffic.judge("test-set", exchange).breaches
    ]


def count_skips(results: Results) -> list[tuple[str, SkipKind | None]]:
    return [
        (example.message, example.skip)
        for finding in results.skips
        if finding.check.name == RULE
        for example in finding.examples
    ]


def test_a_list_that_moved_between_two_walks_leaves_a_stale_count_not_judged() -> None:
    """A case arrives between the walks (or one is retired), and the targets' count was written
    before: no failure and no pass of the count; the moved reason is said, in a note too."""
    for first, latest in (
        ([*range(1, 8)], [*range(8)]),  # case 0 arrived: 7 then 8, the targets say 6
        ([*range(8)], [0, *range(2, 8)]),  # case 1 retired: 8 then 7, the targets say 6
    ):
        traffic = counted(6)
        assert judged(traffic, walk(first, "a"), walk(latest, "b")) == []
        results = traffic.snapshot()
        assert results.failures == [] and results.verdict is not Verdict.VIOLATIONS
        [(why, kind)] = count_skips(results)
        assert kind is SkipKind.MOVED and why.startswith(MOVED_PREFIX)
        assert f"the first of 2 whole walks of {WHERE} listed {len(first)} cases" in why
        assert "(the list moved while it was used)" in why
        assert "the targets' active_cases (6) was not compared" in why
        assert f"{RULE}: {why}" in results.notes
        # the two second pages passed; the count is no pass
        assert results.tally(traffic.walks.once).passed == 2  # type: ignore[union-attr]


def test_one_whole_walk_with_another_count_is_not_judged_and_says_why() -> None:
    traffic = counted(9)
    assert judged(traffic, walk([*range(7)], "a")) == []
    results = traffic.snapshot()
    assert results.failures == [] and results.verdict is not Verdict.VIOLATIONS
    [(why, kind)] = count_skips(results)
    assert kind is SkipKind.MISSING
    assert why == (
        f"not judged: {WHERE} was walked whole once (7 cases): whether the list moved since the "
        "targets were written cannot be told, so the targets' active_cases (9) was not compared; a "
        "second whole walk that lists the same cases judges it"
    )
    assert results.tally(traffic.walks.once).passed == 1  # type: ignore[union-attr]  # page 2 only


def test_a_service_that_leaves_a_case_out_of_every_walk_fails_once_at_the_walk_that_agrees() -> (
    None
):
    """Case 3 is skipped between the pages of every walk, include=retired's too: two walks agree,
    the list stood still, no case changed since the count's moment, and the targets' right count
    fails, on the second walk's last page, with the dates' sum; a third walk fails it no more."""
    skipping = [0, 1, 2, 4, 5, 6]
    traffic = counted(7, AT)
    assert judged(traffic, everything([case(n) for n in skipping], "all")) == []
    assert judged(traffic, walk(skipping, "a")) == []
    assert judged(traffic, walk(skipping, "b")) == [
        (
            RULE,
            "the walk did not list every active case: 7 active at 2026-11-20T12:00:00Z; "
            "0 retired since, 0 added since; listed 6: one missing",
        )
    ]
    assert judged(traffic, walk(skipping, "c")) == []
    results = traffic.snapshot()
    [failure] = results.failures
    assert (failure.check.name, failure.count) == (RULE, 1)
    assert "?projectId=" in failure.examples[0].request.url  # type: ignore[union-attr]
    assert "cursor=b-1" in failure.examples[0].request.url  # type: ignore[union-attr]
    assert count_skips(results) == []


def test_an_undated_count_that_agreeing_walks_contradict_is_said_never_failed() -> None:
    """The targets say 9 without saying when; two walks agree on 7: the count may be stale, so it is
    no failure (and no pass), at any level; it is said, with what would settle it."""
    for strict in (False, True):
        project = ProjectTarget("acme.drafting", PROJECT, active_cases=9)
        traffic = TrafficAudit(
            Policy(strict=strict), apis=("test-set",), targets=Targets(projects=(project,))
        )
        assert judged(traffic, walk([*range(7)], "a"), walk([*range(7)], "b")) == []
        results = traffic.snapshot()
        assert results.failures == [] and results.warnings == []
        [(why, kind)] = count_skips(results)
        assert kind is SkipKind.MOVED
        assert why.startswith(
            f"not judged: the whole walks of {WHERE} agree on 7 cases; the targets' active_cases "
            "(9) was not compared: it does not say when it was counted"
        )
        assert "active_cases_at" in why
        assert results.tally(traffic.walks.once).passed == 2  # type: ignore[union-attr]


def test_a_dated_count_waits_for_an_include_retired_walk_and_is_judged_when_it_comes() -> None:
    """Two walks agree on 6 of a count of 7: the missing case may have been retired since the
    count, which only include=retired shows. Without such a walk the count is not judged (a gap);
    the walk that comes later, listing the same active cases and no retirement, fails it."""
    skipping = [0, 1, 2, 4, 5, 6]
    traffic = counted(7, AT)
    assert judged(traffic, walk(skipping, "a"), walk(skipping, "b")) == []
    [(why, kind)] = count_skips(traffic.snapshot())
    assert kind is SkipKind.MISSING
    assert why == (
        f"not judged: the whole walks of {WHERE} agree on 6 cases, the targets say 7 at "
        "2026-11-20T12:00:00Z with 0 added since: the difference may be cases retired since, "
        "which only a whole walk of the list with include=retired, listing the same active cases, "
        "shows"
    )
    assert judged(traffic, everything([case(n) for n in skipping], "all")) == [
        (
            RULE,
            "the walk did not list every active case: 7 active at 2026-11-20T12:00:00Z; "
            "0 retired since, 0 added since; listed 6: one missing",
        )
    ]
    assert count_skips(traffic.snapshot()) == []


def test_cases_added_and_retired_since_the_count_explain_the_difference() -> None:
    """The targets counted 7 at AT; since then case 0 was added and cases 7 and 8 retired
    (include=retired lists them, retired after AT): 7 - 2 + 1 = 6 listed, as the dates say. Case 9,
    retired before AT, changes nothing."""
    traffic = counted(7, AT)
    later = {**case(0), "addedAt": "2026-11-20T12:30:00Z", "updatedAt": "2026-11-20T12:30:00Z"}
    active = [later, *(case(n) for n in range(1, 6))]
    gone = [retired_case(7), retired_case(8), retired_case(9, at="2026-11-20T11:00:00Z")]
    assert judged(traffic, everything([*active, *gone], "all")) == []
    pages = [
        _page_of(active[:3], next_cursor="a-1"),
        _page_of(active[3:], cursor="a-1"),
    ]
    again = [
        _page_of(active[:3], next_cursor="b-1"),
        _page_of(active[3:], cursor="b-1"),
    ]
    assert judged(traffic, pages, again) == []
    results = traffic.snapshot()
    assert results.failures == [] and count_skips(results) == []


def test_more_cases_than_the_count_and_the_cases_added_since_fail_without_include_retired() -> None:
    """The targets counted 5 at AT; the walks agree on 7, none added since: retirements could only
    lower the sum, so no include=retired walk is needed to fail it."""
    traffic = counted(5, AT)
    assert judged(traffic, walk([*range(7)], "a")) == []
    [(rule, message)] = judged(traffic, walk([*range(7)], "b"))
    assert rule == RULE
    assert message == (
        "the walk did not list every active case as the dates explain: 5 active at "
        "2026-11-20T12:00:00Z; 0 retired since, 0 added since; listed 7: 2 more than the dates "
        "explain (retirements only lower the sum)"
    )


def test_an_include_retired_walk_of_other_active_cases_settles_nothing() -> None:
    """include=retired listed other active cases than the agreeing walks (the list moved between
    them): the count stays not judged, and the reason says so."""
    traffic = counted(7, AT)
    assert judged(traffic, everything([case(n) for n in range(5)], "all")) == []
    assert judged(traffic, walk([*range(6)], "a"), walk([*range(6)], "b")) == []
    [(why, kind)] = count_skips(traffic.snapshot())
    assert kind is SkipKind.MISSING
    assert why.endswith(", and the latest one listed other active cases")


def _page_of(
    cases: list[dict[str, Any]], *, cursor: str | None = None, next_cursor: str | None = None
) -> Exchange:
    query = {} if cursor is None else {"cursor": cursor}
    answer = page(cases, has_more=next_cursor is not None, next_cursor=next_cursor, **query)
    return dataclasses.replace(answer, request_headers={"authorization": f"Bearer {TOKEN}"})


def test_a_list_that_moved_and_came_back_is_judged_when_a_walk_agrees_with_the_first() -> None:
    traffic = counted(6)
    assert judged(traffic, walk([*range(6)], "a"), walk([*range(7)], "b")) == []
    assert [kind for _, kind in count_skips(traffic.snapshot())] == [SkipKind.MOVED]
    assert judged(traffic, walk([*range(6)], "c")) == []  # as the first: judged, and kept
    results = traffic.snapshot()
    assert results.failures == [] and count_skips(results) == []
    assert results.tally(traffic.walks.once).passed == 4  # type: ignore[union-attr]


def _har(tmp_path: Path, name: str, *walks: list[Exchange]) -> Path:
    entries = []
    for number, exchange in enumerate(e for exchanges in walks for e in exchanges):
        recorded = entry(exchange)
        recorded["startedDateTime"] = f"2026-11-30T10:00:{number:02d}.000Z"
        entries.append(recorded)
    return write_har(tmp_path / f"{name}.har", entries)


def test_a_har_judges_the_count_as_the_proxy_does(tmp_path: Path) -> None:
    """`evalmock contract --har` follows the walks with the same code: a moving list and a single
    walk are not judged, two walks that agree on a skipped case fail a dated count that an
    include=retired walk leaves unexplained."""
    moving = counted(6)
    audit_har(_har(tmp_path, "moving", walk([*range(7)], "a"), walk([*range(8)], "b")), moving)
    results = moving.snapshot()
    assert results.failures == [] and [k for _, k in count_skips(results)] == [SkipKind.MOVED]

    once = counted(9)
    audit_har(_har(tmp_path, "once", walk([*range(7)], "a")), once)
    results = once.snapshot()
    assert results.failures == [] and [k for _, k in count_skips(results)] == [SkipKind.MISSING]

    skipping = [0, 1, 2, 4, 5, 6]
    broken = counted(7, AT)
    all_cases = everything([case(n) for n in skipping], "all")
    har = _har(tmp_path, "skipping", all_cases, walk(skipping, "a"), walk(skipping, "b"))
    audit_har(har, broken)
    [failure] = broken.snapshot().failures
    assert failure.check.name == RULE and failure.title.startswith(
        "the walk did not list every active case"
    )


def test_a_walk_that_forgot_its_first_pages_gives_no_reading_of_the_list() -> None:
    """A walk longer than the page bound is judged without its first pages: it says nothing of how
    many cases the list holds, however often it agrees with itself."""
    traffic = audit(
        Targets(projects=(ProjectTarget("acme.drafting", PROJECT, active_cases=9),)),
        WalkBounds(pages=1),
    )
    for name in ("a", "b"):
        pages = [
            listed(range(3), next_cursor=f"{name}-1"),
            listed(range(3, 6), cursor=f"{name}-1", next_cursor=f"{name}-2"),
            listed(range(6, 9), cursor=f"{name}-2"),
        ]
        assert judged(traffic, pages) == []
    assert traffic.walks.counts.lists == {}  # type: ignore[union-attr]
