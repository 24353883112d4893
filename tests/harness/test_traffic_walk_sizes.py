"""Whole walks of one list seen in traffic at different page sizes are compared, as the live audit
compares its own: a case a later walk lists, added before an earlier walk at another page size
began, and missing from it, is a skip of the walk rule, named with both walks; a case added or
retired between the walks is none; a walk not whole, walks at one page size, walks without the
service's Date or far apart are not compared (said, never failed); the kept walks are bounded."""

from __future__ import annotations

import dataclasses
import email.utils
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import SkipKind
from evalmock.harness.checks.policy import Policy
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.harness.traffic.walk_comparison import KeptBounds
from evalmock.harness.traffic.walks import WalkBounds

from .builders import error, hand_case, page
from .test_har import entry, write_har

TOKEN = "s1zes-Walk-Token-0017"
CASES = 20
# the walks' times on the service's clock: every case(n) was added before them
WALKED_AT = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
RULE = "walk_yields_every_case_once"


def case(number: int, added: str | None = None) -> dict[str, Any]:
    added = added or f"2026-11-20T10:{59 - number:02d}:00Z"  # case 0 is the newest
    return hand_case(id=f"case-{number:03d}", addedAt=added, updatedAt=added)


def answered(exchange: Exchange, at: datetime | None, request_id: str) -> Exchange:
    """The exchange with the service's Date header (none for `at` None) and its request id."""
    headers = {**exchange.headers, "x-request-id": request_id}
    if at is not None:
        headers["date"] = email.utils.format_datetime(at, usegmt=True)
    return dataclasses.replace(
        exchange, headers=headers, request_headers={"authorization": f"Bearer {TOKEN}"}
    )


def walk_pages(
    cases: list[dict[str, Any]],
    limit: int,
    *,
    at: datetime | None = WALKED_AT,
    skips: bool = False,
    name: str = "w",
    pages: int | None = None,
) -> list[Exchange]:
    """A walk of `cases` at `limit`, a second a page from `at`; `skips`: the planted defect, each
    next page starts one case after where the page before ended; `pages`: stop after so many."""
    exchanges, offset, number = [], 0, 0
    while True:
        number += 1
        held = cases[offset : offset + limit]
        more = offset + limit < len(cases)
        query: dict[str, Any] = {"limit": limit}
        if number > 1:
            query["cursor"] = f"{name}{number - 1}"
        shown = page(held, has_more=more, next_cursor=f"{name}{number}" if more else None, **query)
        moment = None if at is None else at + timedelta(seconds=number)
        exchanges.append(answered(shown, moment, f"{name}-{number}"))
        if not more or number == pages:
            return exchanges
        offset += limit + (1 if skips else 0)


def audit(bounds: WalkBounds | None = None) -> TrafficAudit:
    return TrafficAudit(Policy(), apis=("test-set",), walk_bounds=bounds)


def judged(traffic: TrafficAudit, *walks: list[Exchange]) -> list[str]:
    """The walk rule's findings, in the words of their examples."""
    found = []
    for walk in walks:
        for exchange in walk:
            for breach in traffic.judge("test-set", exchange).breaches:
                assert breach.check.name == RULE
                found.append(breach.example.message)
    return found


def skips(traffic: TrafficAudit) -> list[tuple[str, SkipKind | None]]:
    return [
        (example.message, example.skip)
        for finding in traffic.snapshot().skips
        if finding.check.name == RULE
        for example in finding.examples
    ]


ALL = [case(n) for n in range(CASES)]
LATER = WALKED_AT + timedelta(minutes=1)


def test_a_case_skipped_at_one_page_size_and_listed_at_another_fails_naming_both_walks() -> None:
    """At limit=5 the skipping service leaves out cases 5, 11 and 17; at limit=10 it lists them."""
    traffic = audit()
    earlier = walk_pages(ALL, 5, skips=True, name="a")
    later = walk_pages(ALL, 10, skips=True, name="b", at=LATER)
    assert judged(traffic, earlier) == []  # each walk alone conforms page by page
    [message] = judged(traffic, later)
    first, expected, received = message.splitlines()
    assert first.startswith(
        f"in acme.drafting/{later[0].query['projectId'].lower()}, the whole walk at limit=5 "
        "(answered 2026-11-30T10:00:01Z to 2026-11-30T10:00:04Z; X-Request-Id a-1 to a-4) did not "
        "list case 'case-005', which the later whole walk at limit=10 (answered "
        "2026-11-30T10:01:01Z to 2026-11-30T10:01:02Z; X-Request-Id b-1 to b-2) lists on its page "
        "1, added 2026-11-20T10:54:00Z: before the earlier walk began"
    )
    assert "“Where the previous page ended: its nextCursor, as it came.”" in first
    assert expected.startswith("expected: case 'case-005' in the walk at limit=5")
    assert received == "received: the walk at limit=5 without it (17 cases; 19 at limit=10)"
    [finding] = traffic.snapshot().failures
    request = finding.examples[0].request
    assert finding.check.name == RULE and request is not None and "cursor=b1" in request.url


def test_a_walk_that_skips_only_at_the_later_page_size_is_not_judged_and_says_why() -> None:
    """The earlier walk lists a case the later does not: retired between them, or skipped, which
    the traffic cannot tell; a third walk that lists it judges the second."""
    traffic = audit()
    assert judged(traffic, walk_pages(ALL, 25, name="a")) == []
    assert judged(traffic, walk_pages(ALL, 5, skips=True, name="b", at=LATER)) == []
    [(why, kind)] = skips(traffic)
    assert kind is SkipKind.MOVED
    assert why.startswith("not judged: acme.drafting/") and why.endswith(
        "the earlier walk listed 3 cases the later did not: retired between them, or skipped, "
        "which the traffic does not tell"
    )
    third = walk_pages(ALL, 25, name="c", at=LATER + timedelta(minutes=1))
    [message] = judged(traffic, third)
    assert "the whole walk at limit=5" in message and "did not list case 'case-005'" in message


def test_a_conforming_service_walked_at_two_page_sizes_passes() -> None:
    traffic = audit()
    assert judged(traffic, walk_pages(ALL, 5, name="a"), walk_pages(ALL, 10, name="b")) == []
    assert skips(traffic) == []
    assert traffic.results.tally(traffic.walks.once).passed >= 1  # type: ignore[union-attr]


def test_a_case_added_between_the_walks_is_no_skip() -> None:
    traffic = audit()
    newer = case(0, "2026-11-30T10:00:30Z")
    assert judged(traffic, walk_pages(ALL[1:], 5, name="a")) == []
    assert judged(traffic, walk_pages([newer, *ALL[1:]], 10, name="b", at=LATER)) == []
    assert skips(traffic) == []


def test_a_case_added_just_before_the_earlier_walk_began_is_not_judged() -> None:
    traffic = audit()
    newer = case(0, "2026-11-30T09:59:30Z")
    judged(traffic, walk_pages(ALL[1:], 5, name="a"))
    assert judged(traffic, walk_pages([newer, *ALL[1:]], 10, name="b", at=LATER)) == []
    [(why, _)] = skips(traffic)
    assert "added less than a minute before the earlier began" in why


def test_a_case_retired_between_the_walks_is_no_skip() -> None:
    traffic = audit()
    assert judged(traffic, walk_pages(ALL, 5, name="a")) == []
    assert judged(traffic, walk_pages(ALL[:3] + ALL[4:], 10, name="b", at=LATER)) == []
    assert [kind for _, kind in skips(traffic)] == [SkipKind.MOVED]
    assert traffic.snapshot().failures == []


def test_a_walk_not_whole_is_not_compared() -> None:
    """An abandoned walk, and one whose cursor was refused, skipped a case; neither is compared."""
    traffic = audit()
    abandoned = walk_pages(ALL, 5, skips=True, name="a", pages=2)
    refused = walk_pages(ALL, 5, skips=True, name="r", pages=2)
    refused[1] = dataclasses.replace(
        answered(error(400, "bad-input", request_id="r-2", header="r-2"), WALKED_AT, "r-2"),
        url=refused[1].url,
    )
    assert judged(traffic, abandoned, refused) == []
    assert judged(traffic, walk_pages(ALL, 10, name="b", at=LATER)) == []
    assert skips(traffic) == [] and traffic.snapshot().failures == []


def test_walks_at_one_page_size_are_not_compared_as_the_live_rule_does_not() -> None:
    """The live rule reads a difference between its two walks at the largest limit as the list
    moving, never as a finding: so does traffic."""
    traffic = audit()
    assert judged(traffic, walk_pages(ALL, 5, skips=True, name="a")) == []
    assert judged(traffic, walk_pages(ALL, 5, name="b", at=LATER)) == []
    assert skips(traffic) == []


def test_without_the_service_s_date_or_far_apart_the_walks_are_not_judged() -> None:
    traffic = audit()
    judged(traffic, walk_pages(ALL, 5, skips=True, name="a", at=None))
    judged(traffic, walk_pages(ALL, 10, name="b", at=LATER))
    assert skips(traffic) == []  # a walk without its start on the service's clock is not kept
    far = audit()
    judged(far, walk_pages(ALL, 5, skips=True, name="a"))
    assert judged(far, walk_pages(ALL, 10, name="b", at=WALKED_AT + timedelta(hours=2))) == []
    [(why, kind)] = skips(far)
    assert "more than an hour apart" in why and kind is SkipKind.MOVED


def test_walks_of_two_callers_with_read_are_compared() -> None:
    traffic = audit()
    judged(traffic, walk_pages(ALL, 5, skips=True, name="a"))
    other = [
        dataclasses.replace(e, request_headers={"authorization": "Bearer an0ther-0017"})
        for e in walk_pages(ALL, 10, name="b", at=LATER)
    ]
    assert len(judged(traffic, other)) == 1


def test_a_har_of_two_walks_at_two_page_sizes_fails_as_the_proxy_does(tmp_path: Path) -> None:
    exchanges = [
        *walk_pages(ALL, 5, skips=True, name="a"),
        *walk_pages(ALL, 10, skips=True, name="b", at=LATER),
    ]
    entries = []
    for index, exchange in enumerate(exchanges):
        recorded = entry(exchange)
        recorded["startedDateTime"] = f"2026-11-30T10:00:{index:02d}.000Z"
        entries.append(recorded)
    traffic = audit()
    audit_har(write_har(tmp_path / "sizes.har", entries), traffic)
    [finding] = traffic.snapshot().failures
    assert finding.check.name == RULE and "did not list case 'case-005'" in finding.title


def test_the_whole_walks_kept_of_one_list_and_over_all_lists_are_bounded() -> None:
    traffic = audit(WalkBounds(kept=KeptBounds(walks=2, cases=3 * CASES)))
    compared = traffic.walks.compared  # type: ignore[union-attr]
    for number in range(6):
        judged(traffic, walk_pages(ALL, 5 + number, name=f"w{number}"))
        assert len(compared.lists) == 1 and len(next(iter(compared.lists.values()))) <= 2
    assert compared.cases == 2 * CASES
    for agent in ("acme.review", "acme.search"):  # two more lists
        other = [
            dataclasses.replace(e, url=e.url.replace("acme.drafting", agent))
            for e in walk_pages(ALL, 5, name=agent)
        ]
        judged(traffic, other)
    assert compared.cases <= 3 * CASES
    held = sum(len(w.ids) for walks in compared.lists.values() for w in walks)
    assert held == compared.cases
