"""The cache of recently served cases changes nothing a caller can see."""

from __future__ import annotations

from evalmock.world import CaseQuery, World
from evalmock.world.listing import CACHED_CASES_PER_LIST


def first_list(world: World) -> CaseQuery:
    agent = world.agent_ids()[0]
    return CaseQuery(agent, world.project_ids(agent)[0], include_retired=True)


def test_a_cached_page_equals_the_freshly_composed_one() -> None:
    warm, cold = World(seed=7, cases=300), World(seed=7, cases=300)
    query = first_list(warm)
    warm.page(query, None, 100)  # fills the cache
    assert warm.page(query, None, 100) == cold.page(query, None, 100)


def test_editing_a_served_case_does_not_change_the_next_answer() -> None:
    world = World(seed=7, cases=300)
    query = first_list(world)
    first = world.page(query, None, 5).cases
    expected = [dict(case) for case in first]
    for case in first:
        case["id"] = "edited"
        case["expect"].clear()
    assert [case["id"] for case in world.page(query, None, 5).cases] == [case["id"] for case in expected]
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
