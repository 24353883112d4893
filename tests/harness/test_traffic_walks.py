"""Walks followed in traffic: a page sent back for a cursor the traffic carried is judged against
the pages before it, per caller; a retry is no repeat; sealed cursors sent back elsewhere are judged
by the binding rules; the state is bounded and holds no credential."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalmock.contract.filters import filters
from evalmock.contract.targets import ProjectTarget, Targets
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.policy import FAILED, WARNED, Policy
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.harness.traffic.har import audit_har
from evalmock.harness.traffic.walks import FILTERS, WalkBounds, caller_of, list_key
from evalmock.world import CaseQuery
from evalmock.world.world import ALL_KINDS
from shared import LIMIT

from .builders import PROJECT, error, hand_case, page
from .test_har import entry, write_har

TOKEN = "tr4ffic-Walk-Token-0017"
OTHER = "an0ther-Caller-Token-0017"


def case(number: int) -> dict[str, Any]:
    added = f"2026-11-20T10:{59 - number:02d}:00Z"  # case 0 is the newest
    return hand_case(id=f"case-{number:03d}", addedAt=added, updatedAt=added)


def listed(
    numbers: range | list[int],
    *,
    cursor: str | None = None,
    next_cursor: str | None = None,
    token: str = TOKEN,
    headers: dict[str, str] | None = None,
    **query: Any,
) -> Exchange:
    """A 200 page of these cases, asked for with `cursor` by the caller holding `token`."""
    if cursor is not None:
        query["cursor"] = cursor
    answer = page(
        [case(n) for n in numbers],
        has_more=next_cursor is not None,
        next_cursor=next_cursor,
        **query,
    )
    sent = {"authorization": f"Bearer {token}", **(headers or {})}
    return dataclasses.replace(answer, request_headers=sent)


def audit(targets: Targets | None = None, bounds: WalkBounds | None = None) -> TrafficAudit:
    return TrafficAudit(Policy(), apis=("test-set",), targets=targets, walk_bounds=bounds)


def broken(traffic: TrafficAudit, exchange: Exchange) -> list[tuple[str, str]]:
    return [(b.check.name, b.outcome) for b in traffic.judge("test-set", exchange).breaches]


def test_a_walk_that_continues_right_breaks_nothing_and_counts_as_checked() -> None:
    traffic = audit(Targets(projects=(ProjectTarget("acme.drafting", PROJECT, active_cases=6),)))
    for again in ("c1", "c2"):
        assert broken(traffic, listed(range(3), next_cursor=again)) == []
        assert broken(traffic, listed(range(3, 6), cursor=again)) == []
    tally = traffic.results.tally(traffic.walks.once)  # type: ignore[union-attr]
    # each second page, and the count at the second whole walk, which lists the same cases
    assert (tally.passed, tally.failed) == (3, 0)
    assert not traffic.walks.walks  # type: ignore[union-attr]  # an ended walk is let go


def test_a_case_twice_on_a_walk_s_first_page_is_told_even_when_the_list_fits_on_it() -> None:
    """A list that fits on one page is a whole walk: a case on it twice breaks the rule, as on any
    later page."""
    for next_cursor in (None, "c1"):
        traffic = audit()
        [breach] = traffic.judge("test-set", listed([0, 1, 2, 2], next_cursor=next_cursor)).breaches
        assert (breach.check.name, breach.example.pointer) == (
            "walk_yields_every_case_once",
            "/data/3/id",
        )
        first_line = breach.example.message.splitlines()[0]
        assert first_line.endswith("came back twice, at positions 2 (page 1) and 3 (page 1)")
        assert breach.example.value == '"case-002"'  # the value at the pointer


def test_a_repeated_case_is_told_with_its_positions_on_the_page_that_repeats_it() -> None:
    traffic = audit()
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    [breach] = traffic.judge("test-set", listed(range(2, 5), cursor="c1")).breaches
    assert (breach.check.name, breach.outcome, breach.example.pointer) == (
        "walk_yields_every_case_once",
        FAILED,
        "/data/0/id",
    )
    assert breach.example.message.splitlines() == [
        f"walking with limit={LIMIT['default']}, case 'case-002' came back twice, at positions 2 "
        "(page 1) and 3 (page 2)",
        "expected: every case exactly once",
        "received: case-002",
    ]
    assert breach.example.value == '"case-002"'  # what the report shows at /data/0/id


def test_a_newer_case_after_the_boundary_breaks_the_walk_s_order() -> None:
    traffic = audit()
    traffic.judge("test-set", listed([0, 1, 3], next_cursor="c1"))
    [breach] = traffic.judge("test-set", listed([2, 4], cursor="c1")).breaches
    assert breach.check.name == "walk_yields_every_case_once"
    assert breach.example.message.startswith(
        "case 'case-002' was added after the case before it ('case-003')"
    )


# When the targets counted the cases: after every case(n) was added
COUNTED_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def dated(active: int, **more: Any) -> Targets:
    """Targets that count the project's active cases at COUNTED_AT."""
    project = ProjectTarget(
        "acme.drafting", PROJECT, active_cases=active, active_cases_at=COUNTED_AT
    )
    return Targets(projects=(project,), **more)


def walk_with_retired(traffic: TrafficAudit, numbers: list[int]) -> None:
    """A whole walk with include=retired, of two pages, that lists these (active) cases."""
    traffic.judge("test-set", listed(numbers[:3], next_cursor="r1", include="retired"))
    traffic.judge("test-set", listed(numbers[3:], cursor="r1", include="retired"))


def test_a_walk_that_lists_fewer_than_the_active_cases_is_told_at_its_end() -> None:
    """Two whole walks that list the same cases: the list stood still, none was retired since the
    count (include=retired says), and its count is judged at the end of the second."""
    traffic = audit(dated(7))
    walk_with_retired(traffic, [0, 1, 2, 4, 5, 6])
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    assert broken(traffic, listed(range(4, 7), cursor="c1")) == []  # one walk: not judged yet
    traffic.judge("test-set", listed(range(3), next_cursor="c2"))
    [breach] = traffic.judge("test-set", listed(range(4, 7), cursor="c2")).breaches
    assert breach.example.message.splitlines() == [
        "the walk did not list every active case: 7 active at 2026-11-20T12:00:00Z; 0 retired "
        "since, 0 added since; listed 6: one missing",
        "expected: 7 cases",
        "received: 6 cases",
    ]
    # With a filter, the targets' count of active cases says nothing.
    traffic.judge("test-set", listed(range(3), next_cursor="k1", kind="hand"))
    assert broken(traffic, listed(range(4, 7), cursor="k1", kind="hand")) == []


def test_a_case_listed_twice_does_not_stand_in_for_one_the_walk_left_out() -> None:
    traffic = audit(dated(6))
    walk_with_retired(traffic, [0, 1, 2, 4, 5])
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    traffic.judge("test-set", listed([2, 4, 5], cursor="c1"))  # the same walk, twice
    traffic.judge("test-set", listed(range(3), next_cursor="c2"))
    # six positions, as many as the active cases, but case 2 again where case 3 should be
    breaches = traffic.judge("test-set", listed([2, 4, 5], cursor="c2")).breaches
    assert [b.example.message.splitlines()[0] for b in breaches] == [
        f"walking with limit={LIMIT['default']}, case 'case-002' came back twice, at positions 2 "
        "(page 1) and 3 (page 2)",
        "the walk did not list every active case: 6 active at 2026-11-20T12:00:00Z; 0 retired "
        "since, 0 added since; listed 5: one missing",
    ]
    assert breaches[1].example.message.splitlines()[1:] == [
        "expected: 6 cases",
        "received: 5 cases",
    ]


def test_an_empty_page_after_has_more_is_a_warning() -> None:
    traffic = audit()
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    assert broken(traffic, listed([], cursor="c1")) == [
        ("page_after_has_more_is_not_empty", WARNED)
    ]


def test_a_cursor_sent_again_is_a_retry_not_a_repeat() -> None:
    traffic = audit()
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    assert broken(traffic, listed(range(3, 6), cursor="c1", next_cursor="c2")) == []
    # fetched twice
    assert broken(traffic, listed(range(3, 6), cursor="c1", next_cursor="c2")) == []
    assert broken(traffic, listed(range(6, 8), cursor="c2")) == []


def test_each_caller_walks_on_its_own_even_with_the_same_cursors() -> None:
    traffic = audit()
    traffic.judge("test-set", listed(range(3), next_cursor="offset-3"))
    traffic.judge("test-set", listed(range(3), next_cursor="offset-3", token=OTHER))
    assert broken(traffic, listed(range(3, 6), cursor="offset-3")) == []
    assert broken(traffic, listed(range(2, 5), cursor="offset-3", token=OTHER)) == [
        ("walk_yields_every_case_once", FAILED)
    ]


def test_an_unknown_cursor_an_error_and_a_forced_answer_are_not_judged_as_walks() -> None:
    traffic = audit()
    assert broken(traffic, listed(range(3), cursor="never-seen")) == []
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    busy = dataclasses.replace(
        error(503, "database-busy", headers={"retry-after": "1"}),
        url=listed([], cursor="c1").url,
        request_headers={"authorization": f"Bearer {TOKEN}"},
    )
    traffic.judge("test-set", busy)
    assert (
        broken(traffic, listed(range(2, 5), cursor="c1", headers={"prefer": "example=empty"})) == []
    )
    assert broken(traffic, listed(range(3, 6), cursor="c1")) == []  # the walk goes on after both


def test_sealed_cursors_sent_back_elsewhere_are_judged_by_the_binding_rules() -> None:
    sealed = Targets(sealed_cursors=True)
    traffic = audit(sealed)
    traffic.judge("test-set", listed(range(3), next_cursor="sealed-1"))
    assert broken(traffic, listed(range(3, 6), cursor="sealed-1", token=OTHER)) == [
        ("cursor_is_bound_to_the_caller", FAILED)
    ]
    [breach] = traffic.judge(
        "test-set", listed(range(3, 6), cursor="sealed-1", kind="hand")
    ).breaches
    assert breach.check.name == "cursor_is_bound_to_the_filters"
    assert breach.example.message.startswith(
        "a cursor reused with kind=hand was not refused with 400 bad-input"
    )
    refused = dataclasses.replace(
        error(400, "bad-input"),
        url=listed([], cursor="sealed-1", include="retired").url,
        request_headers={"authorization": f"Bearer {TOKEN}"},
    )
    assert broken(traffic, refused) == []
    assert traffic.results.tally(traffic.walks.binding["filters"]).passed == 1  # type: ignore[union-attr]

    unsealed = audit()
    unsealed.judge("test-set", listed(range(3), next_cursor="open-1"))
    assert broken(unsealed, listed(range(3, 6), cursor="open-1", token=OTHER)) == []


def test_walk_state_is_bounded_least_recently_used_first() -> None:
    traffic = audit(bounds=WalkBounds(walks=2, pages=3))
    walks = traffic.walks
    assert walks is not None
    for name in ("a", "b", "c"):
        traffic.judge("test-set", listed(range(3), next_cursor=f"{name}1"))
    assert len(walks.walks) == 2 and walks.pages == 2
    assert broken(traffic, listed(range(2, 5), cursor="a1")) == []  # let go: no longer judged
    traffic.judge("test-set", listed(range(3, 6), cursor="c1", next_cursor="c2"))
    traffic.judge("test-set", listed(range(6, 9), cursor="c2", next_cursor="c3"))
    assert walks.pages <= 3 and len(walks.walks) == 1
    # The walk that outgrew the bound forgot its first page: still judged against what it holds.
    assert broken(traffic, listed([7, 9], cursor="c3")) == [("walk_yields_every_case_once", FAILED)]


def test_walk_state_holds_no_credential_and_no_case_body() -> None:
    traffic = audit()
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    state = pickle.dumps((traffic.walks.walks, traffic.walks.cursors))  # type: ignore[union-attr]
    assert TOKEN.encode() not in state and b"case-001" not in state and b"runId" not in state
    assert caller_of(listed([])) != caller_of(listed([], token=OTHER))


def test_a_har_is_walked_in_time_order_whatever_the_order_of_its_entries(tmp_path: Path) -> None:
    first, second = listed(range(3), next_cursor="c1"), listed(range(2, 5), cursor="c1")
    entries = []
    for exchange, started in (
        (second, "2026-11-30T10:00:02.000Z"),
        (first, "2026-11-30T10:00:01.000Z"),
    ):
        recorded = entry(exchange)
        recorded["startedDateTime"] = started
        entries.append(recorded)
    traffic = audit()
    audit_har(write_har(tmp_path / "walk.har", entries), traffic)
    [finding] = traffic.snapshot().failures
    assert (
        finding.check.name == "walk_yields_every_case_once"
        and "case-002' came back twice" in finding.title
    )


def test_each_binding_rule_left_unjudged_says_which_reuse_it_did_not_meet() -> None:
    traffic = audit(dataclasses.replace(Targets(), sealed_cursors=True))
    traffic.judge("test-set", listed(range(3), next_cursor="c1"))
    # the cursor again, with other filters
    traffic.judge("test-set", listed(range(3), cursor="c1", kind="hand"))
    results = traffic.snapshot()
    ran = {t.check.name for t in results.rows() if t.ran}
    reasons = {
        f.check.name: f.title
        for f in results.skips
        if f.check.name.startswith("cursor_is_bound_to_the_")
    }
    assert (
        "cursor_is_bound_to_the_filters" in ran and "cursor_is_bound_to_the_filters" not in reasons
    )
    assert reasons == {
        "cursor_is_bound_to_the_list": "no cursor the traffic had carried was sent back for "
        "another list (another project)",
        "cursor_is_bound_to_the_agent": "no cursor the traffic had carried was sent back for "
        "the same project under another agent",
        "cursor_is_bound_to_the_caller": "no cursor the traffic had carried was sent back by "
        "another caller",
    }


def test_a_sealed_cursor_sent_back_under_another_agent_is_judged_by_the_agent_s_binding() -> None:
    traffic = audit(Targets(sealed_cursors=True))
    traffic.judge("test-set", listed(range(3), next_cursor="sealed-1"))
    again = listed(range(3, 6), cursor="sealed-1")
    other_agent = dataclasses.replace(
        again, url=again.url.replace("/agents/acme.drafting/", "/agents/globex.search/")
    )
    assert other_agent.url != again.url
    # the same project under another agent: the agent alone differs
    assert broken(traffic, other_agent) == [("cursor_is_bound_to_the_agent", FAILED)]
    # another agent's other project: another list
    empty = dataclasses.replace(listed([], cursor="sealed-1"), url=other_agent.url)
    elsewhere = dataclasses.replace(
        empty, url=empty.url.replace(PROJECT, "e06f96fd-cb38-40c5-8773-0f81097202f6")
    )
    assert broken(traffic, elsewhere) == [("cursor_is_bound_to_the_list", FAILED)]


def test_a_walk_continued_with_its_kinds_reordered_is_the_same_walk() -> None:
    """A cursor binds the kinds as a set (the mock accepts the same kinds in any order): sent back
    with them reordered or repeated, it continues its walk, and no binding rule is broken."""
    traffic = audit(Targets(sealed_cursors=True))
    walks = traffic.walks
    assert walks is not None
    traffic.judge("test-set", listed(range(3), next_cursor="s1", kind="correction,hand"))
    assert (
        broken(traffic, listed(range(3, 6), cursor="s1", next_cursor="s2", kind="hand,correction"))
        == []
    )
    # judged as the walk's next page: a case of the first page again is a repeat
    assert broken(traffic, listed([2, 6], cursor="s2", kind="hand,correction,hand")) == [
        ("walk_yields_every_case_once", FAILED)
    ]
    tally = traffic.results.tally(walks.binding["filters"])
    assert (tally.passed, tally.failed) == (0, 0)


def test_kinds_left_out_empty_or_both_named_are_one_walk_of_every_active_case() -> None:
    """ "Left out, both.": a walk without kind continued with both kinds named, or with an empty
    kind (read as left out), is the same walk, and its end is weighed against the active cases."""
    targets = dated(7, sealed_cursors=True)
    for first, then in (
        ({}, {"kind": "hand,correction"}),
        ({"kind": "correction,hand"}, {"kind": ""}),
    ):
        traffic = audit(targets)
        walk_with_retired(traffic, [*range(6)])
        traffic.judge("test-set", listed(range(3), next_cursor="s1", **first))
        traffic.judge("test-set", listed(range(3, 6), cursor="s1", **then))
        # walked again, spelled the other way round: the same list, which stood still
        traffic.judge("test-set", listed(range(3), next_cursor="s2", **then))
        assert broken(traffic, listed(range(3, 6), cursor="s2", **first)) == [
            ("walk_yields_every_case_once", FAILED)  # 6 cases of 7: the whole walk is judged
        ]


def test_a_cursor_reused_with_truly_other_kinds_is_still_judged_by_the_filters_binding() -> None:
    traffic = audit(Targets(sealed_cursors=True))
    traffic.judge("test-set", listed(range(3), next_cursor="s1", kind="correction,hand"))
    [breach] = traffic.judge("test-set", listed(range(3, 6), cursor="s1", kind="hand")).breaches
    assert breach.check.name == "cursor_is_bound_to_the_filters"
    # told as sent, not as the walks compare them
    assert breach.example.message.startswith(
        "a kind=correction,hand cursor reused with kind=hand was not refused with 400 bad-input"
    )
    refused = dataclasses.replace(
        error(400, "bad-input"),
        url=listed([], cursor="s1", kind="correction").url,
        request_headers={"authorization": f"Bearer {TOKEN}"},
    )
    assert broken(traffic, refused) == []
    tally = traffic.results.tally(traffic.walks.binding["filters"])  # type: ignore[union-attr]
    assert (tally.passed, tally.failed) == (1, 1)


def test_two_spellings_are_one_walk_exactly_when_the_mock_binds_a_cursor_to_both() -> None:
    """The walks read the filters as the mock's cursor binding does: the kinds as a set, left out
    all of those the document names."""
    assert filters()["kind"].read(None) == tuple(sorted(ALL_KINDS))
    spellings = [
        {name: value for name, value in (("include", include), ("kind", kind)) if value is not None}
        for include in (None, "", "retired")
        for kind in (None, "", "hand", "correction", "hand,correction", "correction,hand,hand")
    ]
    for one in spellings:
        for other in spellings:
            same_walk = list_key(listed([], **one)) == list_key(listed([], **other))
            bound = [
                CaseQuery.asked("acme.drafting", PROJECT, filters).bound(FILTERS)
                for filters in (one, other)
            ]
            assert same_walk == (bound[0] == bound[1]), (one, other)


def test_a_kind_that_names_other_than_the_document_s_kinds_is_compared_as_sent() -> None:
    """No set of the kinds (a service refuses it): held as sent, never split into a tuple as long as
    the hostile value."""
    hostile = ",".join(["hand", *(f"k{n}" for n in range(500))])
    key = list_key(listed([], kind=hostile))
    assert key is not None and key.filters[FILTERS.index("kind")] == hostile
    assert list_key(listed([], kind="hand,bogus")) != list_key(listed([], kind="bogus,hand"))
