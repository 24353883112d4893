"""Every case is valid against the document and keeps the page's rules, for several seeds."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from evalmock.contract import case_rules
from evalmock.world import CaseQuery, World
from evalmock.world.catalog import AGENTS_BY_ID
from evalmock.world.rules import case_problems

from .helpers import lists

SEEDS = (0, 42, 2026)


@pytest.fixture(scope="module", params=SEEDS)
def seeded_world(request) -> World:
    return World(seed=request.param, cases=80)


def all_cases(world: World):
    for agent, project in lists(world):
        for case in world.iter_cases(CaseQuery(agent, project, include_retired=True)):
            yield agent, project, case


def test_every_case_is_valid_and_keeps_the_rules(seeded_world):
    problems = {case["id"]: case_problems(case) for _, _, case in all_cases(seeded_world)}
    assert {case_id: found for case_id, found in problems.items() if found} == {}


def test_every_case_keeps_the_page_rules_as_the_harness_reads_them(seeded_world):
    breaches = {
        case["id"]: [str(breach) for rule in case_rules.RULES for breach in rule(case)]
        for _, _, case in all_cases(seeded_world)
    }
    assert {case_id: found for case_id, found in breaches.items() if found} == {}


def test_each_list_has_both_kinds_retired_cases_and_experts(seeded_world):
    for agent, project in lists(seeded_world):
        cases = list(seeded_world.iter_cases(CaseQuery(agent, project, include_retired=True)))
        kinds = Counter(case["kind"] for case in cases)
        assert kinds["hand"] and kinds["correction"], (agent, project)
        assert any("retired" in case for case in cases)
        corrections = [case for case in cases if case["kind"] == "correction"]
        assert any("expert" in case for case in corrections), "some corrections are experts' cases"
        assert any("expert" not in case for case in corrections), "and some are not"


def test_about_one_case_in_eight_is_retired():
    world = World(seed=5, cases=4000)
    for agent, project in lists(world)[:3]:
        everything = world.count_cases(CaseQuery(agent, project, include_retired=True))
        retired = everything - world.count_cases(CaseQuery(agent, project))
        assert 0.10 <= retired / everything <= 0.15


def test_added_at_strictly_decreases_along_each_list(seeded_world):
    for agent, project in lists(seeded_world):
        stamps = [
            case["addedAt"]
            for case in seeded_world.iter_cases(CaseQuery(agent, project, include_retired=True))
        ]
        assert all(newer > older for newer, older in itertools.pairwise(stamps)), (agent, project)


def test_case_ids_are_unique_within_a_list(seeded_world):
    for agent, project in lists(seeded_world):
        ids = [
            case["id"]
            for case in seeded_world.iter_cases(CaseQuery(agent, project, include_retired=True))
        ]
        assert len(ids) == len(set(ids))


def test_cases_belong_to_their_project_and_name_their_agents_version(seeded_world):
    for agent, project, case in all_cases(seeded_world):
        assert case["projectId"] == project
        if "fixture" not in case["id"] and case["id"] not in {
            "case-7f3a9c21",
            "corr-0c44e2aa",
            "case-a19d0e55",
        }:
            assert case["madeOn"].startswith(f"{agent}@")
            assert case["runId"].startswith("run-")


def test_should_call_names_tools_the_agent_has(seeded_world):
    for agent, _, case in all_cases(seeded_world):
        if "fixture" in case["id"]:
            continue
        known = {tool.name for tool in AGENTS_BY_ID[agent].tools} | set(
            seeded_world.vocabulary.extra_tools
        )
        decisions = case["expect"].get("decisions", {})
        assert {call["tool"] for call in decisions.get("shouldCall", [])} <= known
        assert set(decisions.get("mustNotCall", [])) <= known


def test_item_keys_are_case_ids_and_pointers_follow_the_ranks(seeded_world):
    for _, _, case in all_cases(seeded_world):
        for position, item in enumerate(case["expect"].get("items", [])):
            assert item["key"].startswith(("case-", "corr-"))
            assert item["rank"] == position
            if "fixture" not in case["id"]:
                assert item["pointer"].endswith(f"/{position}")


def test_retired_cases_were_retired_after_they_were_added(seeded_world):
    retired = [case for _, _, case in all_cases(seeded_world) if "retired" in case]
    assert retired
    for case in retired:
        assert case["retired"]["at"] > case["addedAt"]
        assert case["updatedAt"] == case["retired"]["at"]
        assert case["retired"]["reason"]


def test_cases_are_plain_json(seeded_world):
    for _, _, case in all_cases(seeded_world):
        assert json.loads(json.dumps(case)) == case


def test_a_generated_id_gives_back_its_rank_and_no_other_id_does(world):
    own = world.own_list("example", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0")
    factory = own.factory
    ranks = [0, 1, 39, 40, 12_345, 10**12]
    assert [factory.rank_of(factory.case_id(rank)) for rank in ranks] == ranks
    swapped = ("corr-" if factory.case_id(0).startswith("case-") else "case-") + factory.case_id(0)[
        5:
    ]
    assert [
        factory.rank_of(other)
        for other in (swapped, "case-fixture-unicode", "corr-XYZ", "case-00000000000g")
    ] == [None, None, None, None]
