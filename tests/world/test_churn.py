"""`--churn`'s moving lists: arrivals at the top and retirements, deterministic per seed, every case
keeping the world's rules, and walks that continue across them (each case once, newest first)."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest

from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.churn import RETIRE_EVERY, ChurningWorld
from evalmock.world.rules import case_problems

CASES = 120
ACTIVE = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT)
EVERYTHING = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired=True)
MAX_PAGES = 1_000


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=42, cases=CASES)


def read(churning: ChurningWorld, query: CaseQuery, after: int | None, limit: int) -> Any:
    """One request: the page's cases (decoded) and its next position."""
    page = churning.encoded_page(query, after, limit)
    return [orjson.loads(text) for text in page.cases], page.next_position


def walk(churning: ChurningWorld, query: CaseQuery, limit: int) -> list[dict[str, Any]]:
    """One walk from the first page to the last; every page is a request, so the list moves."""
    cases: list[dict[str, Any]] = []
    after = None
    for _ in range(MAX_PAGES):
        page, after = read(churning, query, after, limit)
        cases += page
        if after is None:
            return cases
    raise AssertionError("the walk did not end")


def requests_bodies(world: World, every: int, count: int) -> list[bytes]:
    """The bodies of `count` first pages (alternating filters) of a fresh churning world."""
    churning = ChurningWorld(world, every)
    bodies = []
    for number in range(count):
        query = EVERYTHING if number % 2 else ACTIVE
        bodies.append(b",".join(churning.encoded_page(query, None, 10).cases))
    return bodies


def test_the_same_seed_and_requests_give_the_same_arrivals_retirements_and_bodies(
    world: World,
) -> None:
    first, again = requests_bodies(world, 2, 40), requests_bodies(world, 2, 40)
    assert first == again
    other_seed = requests_bodies(World(seed=7, cases=CASES), 2, 40)
    assert first[-1] != other_seed[-1]


def test_a_case_arrives_at_the_top_every_n_requests_of_its_list(world: World) -> None:
    churning = ChurningWorld(world, 3)
    tops = [read(churning, ACTIVE, None, 1)[0][0]["id"] for _ in range(9)]
    # requests 3, 6 and 9 each bring a case, which that request already lists first
    assert tops[0] == tops[1] != tops[2] == tops[3] == tops[4] != tops[5]
    assert tops[5] == tops[6] == tops[7] != tops[8]
    assert churning.count_cases(EVERYTHING) == world.count_cases(EVERYTHING) + 3


def test_another_list_s_requests_do_not_move_this_one(world: World) -> None:
    other_project = world.project_ids(EXAMPLE_AGENT)[1]
    churning = ChurningWorld(world, 1)
    before = read(churning, EVERYTHING, None, 5)[0]
    for _ in range(10):
        read(churning, CaseQuery(EXAMPLE_AGENT, other_project), None, 5)
    assert churning.count_cases(EVERYTHING) == world.count_cases(EVERYTHING) + 1
    assert read(churning, EVERYTHING, None, 5)[0][1:] == before[:4]


def test_a_walk_across_arrivals_yields_each_case_once_newest_first(world: World) -> None:
    churning = ChurningWorld(world, 1)  # a case on every request, a retirement on every third
    before = {case["id"] for case in world.iter_cases(ACTIVE)}
    walked = walk(churning, ACTIVE, 7)
    ids = [case["id"] for case in walked]
    assert len(ids) == len(set(ids))
    assert all(a["addedAt"] > b["addedAt"] for a, b in itertools.pairwise(walked))
    still_active = {case["id"] for case in walk(churning, ACTIVE, 100)}
    # what was listed before the walk began and still is after it ended, the walk listed
    assert before & still_active <= set(ids)
    assert len(still_active - before) >= len(walked) // 7  # the arrivals


def test_a_cursor_issued_before_arrivals_continues_where_its_page_ended(world: World) -> None:
    churning = ChurningWorld(world, 1)
    first, after = read(churning, EVERYTHING, None, 10)
    for _ in range(5):  # five arrivals, and a retirement, while the user reads page one
        read(churning, ACTIVE, None, 1)
    second, _ = read(churning, EVERYTHING, after, 10)
    still = [case["id"] for case in world.iter_cases(EVERYTHING)][:20]
    assert [case["id"] for case in first[1:]] == still[:9]  # the first request's arrival on top
    assert [case["id"] for case in second] == still[9:19]


def test_a_walk_that_began_among_arrivals_continues_through_them_into_the_world(
    world: World,
) -> None:
    churning = ChurningWorld(world, 1)
    for _ in range(4):
        read(churning, EVERYTHING, None, 1)
    # the fifth request brings the fifth arrival: pages of two run through all five, then on
    walked = walk(churning, EVERYTHING, 2)
    ids = [case["id"] for case in walked]
    assert len(ids) == len(set(ids))
    assert ids[5:] == [case["id"] for case in world.iter_cases(EVERYTHING)][: len(ids) - 5]


def test_a_retired_case_comes_back_only_with_include_retired(world: World) -> None:
    churning = ChurningWorld(world, 1)
    for _ in range(RETIRE_EVERY * 4):
        read(churning, ACTIVE, None, 1)
    # each read in one request, so that its count is the list's as the request left it
    everything = {case["id"]: case for case in read(churning, EVERYTHING, None, 10_000)[0]}
    assert churning.count_cases(EVERYTHING) == len(everything)
    active = {case["id"] for case in read(churning, ACTIVE, None, 10_000)[0]}
    assert churning.count_cases(ACTIVE) == len(active)
    retired_before = {case["id"] for case in world.iter_cases(EVERYTHING) if "retired" in case}
    retired_now = {case_id for case_id, case in everything.items() if "retired" in case}
    retired_now -= retired_before
    assert len(retired_now) == 4  # one retirement per RETIRE_EVERY arrivals
    assert not retired_now & active
    for case_id in retired_now:
        case = everything[case_id]
        assert case["updatedAt"] == case["retired"]["at"] > case["addedAt"]
        assert set(case["retired"]) == {"reason", "by", "at"}


def test_arrived_and_retired_cases_keep_every_rule_of_the_world(world: World) -> None:
    churning = ChurningWorld(world, 1)
    for _ in range(RETIRE_EVERY * 20):
        read(churning, ACTIVE, None, 1)
    cases = walk(churning, EVERYTHING, 100)  # its first page brings one more arrival
    moved = [case for case in cases if case["addedAt"] > "2026-11-21"]
    assert len(moved) == RETIRE_EVERY * 20 + 1
    assert {case["kind"] for case in moved} == {"hand", "correction"}
    assert [(case["id"], case_problems(case)) for case in cases if case_problems(case)] == []
    assert all(case["id"].startswith("case-") == (case["kind"] == "hand") for case in cases)
    assert all(case["projectId"] == EXAMPLE_PROJECT for case in moved)


@pytest.mark.parametrize("after", [-1, -2, CASES + 100])
def test_a_position_not_in_the_list_is_refused_and_not_counted(world: World, after: int) -> None:
    churning = ChurningWorld(world, 1)
    read(churning, ACTIVE, None, 1)  # one arrival: position -1 exists, -2 does not
    if after == -1:
        assert read(churning, ACTIVE, after, 5)[1] is not None
        return
    with pytest.raises(ValueError, match="not in this list"):
        churning.encoded_page(ACTIVE, after, 5)
    assert churning.count_cases(EVERYTHING) == world.count_cases(EVERYTHING) + 1


def test_churn_below_one_request_is_refused(world: World) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ChurningWorld(world, 0)


def test_a_reload_carries_the_lists_it_left_as_they_were_and_restarts_the_changed_ones(
    world: World,
) -> None:
    from evalmock.world.data_files import load_document

    other = CaseQuery(EXAMPLE_AGENT, world.project_ids(EXAMPLE_AGENT)[1], include_retired=True)
    before = world.with_data(load_document({}, world))
    churning = ChurningWorld(before, 1)
    page, after = read(churning, EVERYTHING, None, 1)
    _, other_after = read(churning, other, None, 1)
    assert after is not None and after < 0 and other_after is not None  # in the arrivals
    # a reload adding a case to the other list only
    added = {
        "testSet": [
            {"agentId": EXAMPLE_AGENT, "projectId": other.project_id, "cases": [{"kind": "hand"}]}
        ]
    }
    reloaded = world.with_data(load_document(added, world))
    carried = ChurningWorld(reloaded, 1, carried=churning)
    following, _ = read(carried, EVERYTHING, after, 1)  # goes on below where it was
    assert following and following[0]["id"] != page[0]["id"]
    with pytest.raises(ValueError, match="not in this list"):
        read(carried, other, other_after, 1)  # its list changed: it starts still again
