"""Walking the pages yields exactly the matching cases, newest first, once each, whatever the
filters."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalmock.world import CaseQuery, World
from evalmock.world.cases import CaseFactory
from evalmock.world.catalog import AGENTS_BY_ID, EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.layout import (
    CATEGORIES,
    CategoryFilter,
    block_matches,
    block_pattern,
    is_retired,
    kind_of,
)
from evalmock.world.listing import CaseList
from evalmock.world.timeline import parse_rfc3339, rfc3339

from .helpers import every_case, lists, matches, walk

KIND_SETS = st.sampled_from(
    [frozenset({"hand"}), frozenset({"correction"}), frozenset({"correction", "hand"})]
)
HYPOTHESIS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def brute(world):
    return {pair: every_case(world, *pair) for pair in lists(world)}


@HYPOTHESIS
@given(
    data=st.data(),
    kinds=KIND_SETS,
    include_retired=st.booleans(),
    limits=st.lists(st.integers(1, 100), min_size=1, max_size=4),
)
def test_walking_every_page_returns_exactly_the_matching_cases(
    world, brute, data, kinds, include_retired, limits
):
    agent, project = data.draw(st.sampled_from(lists(world)))
    query = CaseQuery(
        agent, data.draw(st.sampled_from([project, project.upper()])), include_retired, kinds
    )
    expected = [case for case in brute[agent, project] if matches(case, query)]
    assert walk(world, query, limits) == expected


@HYPOTHESIS
@given(kinds=KIND_SETS, include_retired=st.booleans(), cases=st.integers(1, 130))
def test_walks_are_exact_for_any_world_size(kinds, include_retired, cases):
    world = World(seed=cases, cases=cases)
    query = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired, kinds)
    expected = [
        case for case in every_case(world, EXAMPLE_AGENT, EXAMPLE_PROJECT) if matches(case, query)
    ]
    assert walk(world, query, [7]) == expected == list(world.iter_cases(query))
    assert world.count_cases(query) == len(expected)


def test_iter_cases_is_the_brute_force_list(world, brute):
    for (agent, project), cases in brute.items():
        for include_retired in (False, True):
            query = CaseQuery(agent, project, include_retired)
            assert list(world.iter_cases(query)) == [case for case in cases if matches(case, query)]


def test_the_first_page_is_the_newest_and_says_whether_more_exist(world):
    query = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired=True)
    everything = list(world.iter_cases(query))
    page = world.page(query, None, 10)
    assert page.cases == everything[:10]
    assert page.next_position is not None
    last = world.page(query, None, len(everything))
    assert last.cases == everything and last.next_position is None


def test_a_page_that_ends_exactly_at_the_last_match_is_the_last_page(world):
    query = CaseQuery(
        "acme.drafting", world.project_ids("acme.drafting")[1], kinds=frozenset({"hand"})
    )
    total = world.count_cases(query)
    first = world.page(query, None, total - 3)
    second = world.page(query, first.next_position, 3)
    assert len(second.cases) == 3 and second.next_position is None


def test_pages_of_a_huge_world_are_cheap_and_stay_ordered():
    # A 10-million-case list: a page deep inside it is computed without touching the rest.
    world = World(seed=42, cases=10_000_000)
    query = CaseQuery(
        "globex.search", world.project_ids("globex.search")[0], kinds=frozenset({"hand"})
    )
    page = world.page(query, 9_999_000, 100)
    assert len(page.cases) == 100
    stamps = [case["addedAt"] for case in page.cases]
    assert stamps == sorted(stamps, reverse=True) and len(set(stamps)) == 100
    tail = world.page(query, 9_999_990, 100)
    assert tail.next_position is None and len(tail.cases) < 10
    assert world.count_cases(query) == 10_000_000 * 15 // 40 - 10_000_000 * 2 // 40


def test_a_project_the_agent_does_not_have_is_an_empty_last_page(world):
    other = world.project_ids("globex.search")[0]
    page = world.page(CaseQuery("acme.drafting", other), None, 25)
    assert page.cases == [] and page.next_position is None


def test_no_kinds_is_an_empty_last_page(world):
    page = world.page(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, True, frozenset()), None, 25)
    assert page.cases == [] and page.next_position is None


def test_an_unknown_agent_is_a_key_error(world):
    assert not world.has_agent("acme.unknown")
    with pytest.raises(KeyError):
        world.page(CaseQuery("acme.unknown", EXAMPLE_PROJECT), None, 25)


@pytest.mark.parametrize("after", [-1, 10**9, "3", 2.0, True])
def test_a_position_outside_the_list_is_a_value_error(world, after):
    with pytest.raises(ValueError):
        world.page(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT), after, 25)


def test_a_limit_below_one_is_a_value_error(world):
    with pytest.raises(ValueError):
        world.page(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT), None, 0)


@pytest.mark.parametrize(
    "accepted", [frozenset(), frozenset({0}), frozenset({1, 3}), frozenset(CATEGORIES)]
)
def test_a_blocks_matches_are_the_offsets_of_its_accepted_categories(accepted):
    for block in (0, 1, 17):
        pattern = block_pattern(12345, block)
        assert block_matches(12345, block, accepted) == tuple(
            o for o, c in enumerate(pattern) if c in accepted
        )


# Curated cases at given generated ranks: -1 is newer than every generated case, `size` older than
# every one; a shift of -1, 0 or +1 second around the rank's own addedAt (0 ties with it: a curated
# case goes before the first generated one added strictly before it, so it is listed first of the
# two).
CURATED_SPOTS = st.lists(
    st.tuples(st.integers(-1, 130), st.sampled_from([-1, 0, 1]), st.sampled_from(CATEGORIES)),
    max_size=40,
)


@HYPOTHESIS
@given(
    size=st.integers(0, 130),
    spots=CURATED_SPOTS,
    kinds=KIND_SETS,
    include_retired=st.booleans(),
    limits=st.lists(st.integers(1, 60), min_size=1, max_size=3),
)
def test_pages_are_exact_with_curated_cases_anywhere_among_the_generated(
    world, size, spots, kinds, include_retired, limits
):
    factory = CaseFactory(
        world.seed, AGENTS_BY_ID[EXAMPLE_AGENT], EXAMPLE_PROJECT.lower(), world.vocabulary
    )
    generated = [factory.case(rank) for rank in range(size)]
    first_stamp = parse_rfc3339(factory.case(0)["addedAt"]) + 5

    def stamp(rank: int, shift: int) -> str:
        if rank < 0 or not generated:
            return rfc3339(first_stamp)
        return rfc3339(
            parse_rfc3339(generated[min(rank, size - 1)]["addedAt"])
            + (-5 if rank >= size else shift)
        )

    curated = []
    for number, (rank, shift, category) in enumerate(spots):
        case = {"id": f"curated-{number}", "addedAt": stamp(rank, shift), "kind": kind_of(category)}
        if is_retired(category):
            case["retired"] = case["addedAt"]
        curated.append(case)
    case_list = CaseList(factory, size, curated)
    query = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired, kinds)
    newest_first = sorted(
        generated + curated, key=lambda c: (c["addedAt"], c in curated), reverse=True
    )
    expected = [case["id"] for case in newest_first if matches(case, query)]
    wanted = CategoryFilter.of(kinds, include_retired)
    read, after = [], None
    for step in range(1_000):
        page = case_list.page(wanted, after, limits[step % len(limits)])
        read += [orjson.loads(text)["id"] for text in page.cases]
        if page.next_position is None:
            break
        after = page.next_position
    assert read == expected
