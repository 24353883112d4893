"""Project facts (for the banner and targets files) are true and exact."""

from __future__ import annotations

from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT

from .helpers import lists


def test_agents_have_dotted_ids_and_two_or_three_lower_case_projects_of_their_own(world):
    assert {"acme.drafting", "acme.support.triage", "globex.search", EXAMPLE_AGENT} <= set(
        world.agent_ids()
    )
    for agent in world.agent_ids():
        projects = world.project_ids(agent)
        own = [p for p in projects if agent == EXAMPLE_AGENT or p != EXAMPLE_PROJECT]
        assert 2 <= len(own) <= 3
        assert all(project == project.lower() and len(project) == 36 for project in projects)
    assert EXAMPLE_PROJECT in world.project_ids(EXAMPLE_AGENT)


def test_one_project_serves_two_agents(world):
    """The page's example project is a list of its agent and of acme.drafting: two lists, one id."""
    serving = [a for a in world.agent_ids() if EXAMPLE_PROJECT in world.project_ids(a)]
    assert serving == ["acme.drafting", EXAMPLE_AGENT]
    ids = [
        {case["id"] for case in world.iter_cases(CaseQuery(agent, EXAMPLE_PROJECT))}
        for agent in serving
    ]
    assert ids[0] and ids[1] and not ids[0] & ids[1]


def test_every_project_has_retired_hand_and_correction_cases(world):
    facts = world.project_facts()
    assert {(fact.agent_id, fact.project_id) for fact in facts} == set(lists(world))
    assert all(fact.has_retired and fact.has_hand and fact.has_corrections for fact in facts)


def test_active_cases_is_the_exact_count(world):
    for fact in world.project_facts():
        active = sum(1 for _ in world.iter_cases(CaseQuery(fact.agent_id, fact.project_id)))
        assert fact.active_cases == active


def test_even_a_four_case_world_has_every_kind_of_case():
    world = World(seed=11, cases=4)
    assert all(
        fact.has_retired and fact.has_hand and fact.has_corrections
        for fact in world.project_facts()
    )


def test_facts_of_a_huge_world_are_exact_arithmetic():
    world = World(seed=1, cases=10_000_000)
    fact = next(fact for fact in world.project_facts() if fact.agent_id == "globex.search")
    assert fact.active_cases == 10_000_000 * 35 // 40
