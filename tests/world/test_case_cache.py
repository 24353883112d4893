"""The cache of recently served cases changes nothing a caller can see, and its bytes are the cases'
JSON."""

from __future__ import annotations

import itertools

import orjson

from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.listing import CACHED_CASES_PER_LIST

MAX_PAGES = 100  # every walk here is bounded


def first_list(world: World) -> CaseQuery:
    agent = world.agent_ids()[0]
    return CaseQuery(agent, world.project_ids(agent)[0], include_retired=True)


def test_a_cached_page_equals_the_freshly_composed_one() -> None:
    warm, cold = World(seed=7, cases=300), World(seed=7, cases=300)
    query = first_list(warm)
    warm.page(query, None, 100)  # fills the cache
    assert warm.page(query, None, 100) == cold.page(query, None, 100)


def test_a_page_partly_in_the_cache_equals_the_freshly_composed_one() -> None:
    warm, cold = World(seed=7, cases=300), World(seed=7, cases=300)
    query = first_list(warm)
    warm.encoded_page(query, None, 10)  # the first 10 cached, the next 20 not
    assert warm.encoded_page(query, None, 30) == cold.encoded_page(query, None, 30)
    assert warm.encoded_page(query, None, 1) == cold.encoded_page(query, None, 1)


def test_editing_a_served_case_does_not_change_the_next_answer() -> None:
    world = World(seed=7, cases=300)
    query = first_list(world)
    first = world.page(query, None, 5).cases
    expected = [dict(case) for case in first]
    for case in first:
        case["id"] = "edited"
        case["expect"].clear()
    assert [case["id"] for case in world.page(query, None, 5).cases] == [
        case["id"] for case in expected
    ]
    assert all(case["expect"] for case in world.page(query, None, 5).cases)


def test_a_walk_longer_than_the_cache_still_yields_every_case_once() -> None:
    world = World(seed=7, cases=CACHED_CASES_PER_LIST + 200)
    query = first_list(world)
    ids, after = [], None
    while True:
        page = world.page(query, after, 100)
        ids += [case["id"] for case in page.cases]
        if page.next_position is None:
            break
        after = page.next_position
    assert ids == [case["id"] for case in world.iter_cases(query)]
    assert len(ids) == len(set(ids)) == world.count_cases(query)


def test_an_encoded_page_is_the_page_as_json_curated_cases_included() -> None:
    world = World(seed=7, cases=300)
    curated_ids = {c.case["id"] for c in world.curated if c.agent_id == EXAMPLE_AGENT}
    seen_curated = False
    for query in (
        CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired=True),
        CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, kinds=frozenset({"hand"})),
    ):
        after = None
        for _ in range(MAX_PAGES):
            encoded, page = world.encoded_page(query, after, 40), world.page(query, after, 40)
            assert encoded.cases == [orjson.dumps(case) for case in page.cases]
            assert encoded.next_position == page.next_position
            seen_curated |= any(case["id"] in curated_ids for case in page.cases)
            if page.next_position is None:
                break
            after = page.next_position
    assert seen_curated, "the walk should cross curated cases"


def test_an_encoded_page_of_a_project_the_agent_lacks_is_empty() -> None:
    world = World(seed=7, cases=300)
    other = world.project_ids(world.agent_ids()[1])[0]
    page = world.encoded_page(CaseQuery(EXAMPLE_AGENT, other), None, 25)
    assert page.cases == [] and page.next_position is None


def test_the_cache_never_holds_more_than_its_bound_of_cases() -> None:
    world = World(seed=7, cases=CACHED_CASES_PER_LIST + 200)
    query = first_list(world)
    case_list = world._lists[query.agent_id, query.project_id]
    after, held = None, []
    for _ in range(MAX_PAGES):
        page = world.encoded_page(query, after, 100)
        held.append(len(case_list._texts))
        if page.next_position is None:
            break
        after = page.next_position
    assert max(held) <= CACHED_CASES_PER_LIST
    assert any(later < earlier for earlier, later in itertools.pairwise(held)), (
        "a full cache is emptied on the way"
    )
