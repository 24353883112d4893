"""The targets' count of a list, judged from traffic (the proxy's, a HAR file's) only where the list
stood still: a list that moved while it was used, or was walked whole once, is said not judged with
its reason (no failure, no pass); a service that leaves a case out of every walk still fails."""

from __future__ import annotations

from pathlib import Path

from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import MOVED_PREFIX, SkipKind
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.harness.traffic.walks import WalkBounds

from .builders import PROJECT
from .test_har import entry, write_har
from .test_traffic_walks import audit, listed

RULE = "walk_yields_every_case_once"
WHERE = f"acme.drafting/{PROJECT}"


def counted(active: int) -> TrafficAudit:
    return audit(Targets(projects=(ProjectTarget("acme.drafting", PROJECT, active_cases=active),)))


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
    """Case 3 is skipped between the pages of every walk: two walks agree, the list stood still,
    and the targets' right count fails, on the second walk's last page; a third walk fails it no
    more."""
    skipping = [0, 1, 2, 4, 5, 6]
    traffic = counted(7)
    assert judged(traffic, walk(skipping, "a")) == []
    assert judged(traffic, walk(skipping, "b")) == [
        (RULE, "the walk did not list every active case")
    ]
    assert judged(traffic, walk(skipping, "c")) == []
    results = traffic.snapshot()
    [failure] = results.failures
    assert (failure.check.name, failure.count) == (RULE, 1)
    assert "?projectId=" in failure.examples[0].request.url  # type: ignore[union-attr]
    assert "cursor=b-1" in failure.examples[0].request.url  # type: ignore[union-attr]
    assert count_skips(results) == []


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
    walk are not judged, two walks that agree on a skipped case fail."""
    moving = counted(6)
    audit_har(_har(tmp_path, "moving", walk([*range(7)], "a"), walk([*range(8)], "b")), moving)
    results = moving.snapshot()
    assert results.failures == [] and [k for _, k in count_skips(results)] == [SkipKind.MOVED]

    once = counted(9)
    audit_har(_har(tmp_path, "once", walk([*range(7)], "a")), once)
    results = once.snapshot()
    assert results.failures == [] and [k for _, k in count_skips(results)] == [SkipKind.MISSING]

    skipping = [0, 1, 2, 4, 5, 6]
    broken = counted(7)
    audit_har(_har(tmp_path, "skipping", walk(skipping, "a"), walk(skipping, "b")), broken)
    [failure] = broken.snapshot().failures
    assert failure.check.name == RULE and failure.title == "the walk did not list every active case"


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
