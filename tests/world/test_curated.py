"""The curated fixtures exist in every world, sit in order, and a bad fixture fails loudly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalmock.contract.case_rules import canonical_json
from evalmock.contract.documents import TEST_SET
from evalmock.paths import fixtures_dir
from evalmock.world import CaseQuery, FixtureError, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from valid import valid_case


def curated(world: World, case_id: str) -> dict:
    return next(c.case for c in world.curated if c.case["id"] == case_id)


def all_ids(world: World, agent: str, project: str) -> list[str]:
    return [
        case["id"] for case in world.iter_cases(CaseQuery(agent, project, include_retired=True))
    ]


@pytest.mark.parametrize("seed", [1, 42])
@pytest.mark.parametrize("cases", [1, 90, 3000])
def test_curated_cases_are_listed_in_every_world(seed, cases):
    world = World(seed=seed, cases=cases)
    assert world.curated
    listed = {
        (c.agent_id, c.project_id): all_ids(world, c.agent_id, c.project_id) for c in world.curated
    }
    for item in world.curated:
        assert listed[item.agent_id, item.project_id].count(item.case["id"]) == 1


def test_the_reference_pages_examples_are_served_as_written(world):
    examples = TEST_SET.spec["paths"]["/agents/{agentId}/test-set/cases"]["get"]["responses"]["200"]
    documented = [
        case
        for name in ("page", "retired")
        for case in examples["content"]["application/json"]["examples"][name]["value"]["data"]
    ]
    served = list(world.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, include_retired=True)))
    for case in documented:
        assert case in served
    first = world.page(
        CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT.upper(), include_retired=True), None, 25
    )
    assert first.cases[0]["id"] == "case-7f3a9c21"  # the newest case of the example project


def test_the_limits_case_sits_exactly_on_the_should_call_bounds(world):
    calls = curated(world, "corr-fixture-limits")["expect"]["decisions"]["shouldCall"]
    assert len(calls[0]["tool"]) == 200
    assert len(calls[0]["args"]) == 100
    assert len(canonical_json(calls[0]["args"], ascii=True)) == 4000
    assert calls[1]["args"] == {}
    assert curated(world, "corr-fixture-limits")["expect"]["decisions"]["mustNotCall"] == []


def test_fixtures_cover_unicode_long_texts_and_a_retired_expert(world):
    unicode_case = json.dumps(curated(world, "case-fixture-unicode"), ensure_ascii=False)
    for sample in ("契約", "📜", "ואז", "البند", "👩🏽‍⚖️"):
        assert sample in unicode_case
    assert len(curated(world, "case-fixture-long-text")["expect"]["answer"]["shouldSay"]) > 4000
    retired = curated(world, "case-fixture-retired-expert")
    assert retired["expert"] is True and "retired" in retired


def test_a_retired_fixture_is_hidden_without_include_retired(world):
    active = [case["id"] for case in world.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT))]
    assert "case-fixture-retired-expert" not in active
    assert "case-fixture-retired-expert" in all_ids(world, EXAMPLE_AGENT, EXAMPLE_PROJECT)


def test_a_fixture_placed_by_index_takes_the_seeds_project():
    for seed in (1, 2):
        world = World(seed=seed, cases=10)
        assert (
            curated(world, "case-fixture-minimal")["projectId"]
            == world.project_ids("acme.drafting")[0]
        )


def test_returned_fixtures_are_copies(world):
    query = CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT)
    world.page(query, None, 1).cases[0]["id"] = "changed"
    assert world.page(query, None, 1).cases[0]["id"] == "case-7f3a9c21"


def write_fixture(folder: Path, cases: list) -> None:
    (folder / "bad.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")


def good_entry() -> dict:
    case = valid_case("hand", id="case-x")
    del case["projectId"]  # a fixture takes its project from its entry
    return {"agentId": EXAMPLE_AGENT, "project": EXAMPLE_PROJECT, "note": "", "case": case}


def broken(change) -> dict:
    entry = good_entry()
    change(entry)
    return entry


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (broken(lambda e: e["case"].pop("runId")), "runId"),
        (broken(lambda e: e["case"].update(id="corr-x")), "starts with case-"),
        (
            broken(
                lambda e: e["case"].update(
                    addedAt="2026-11-20T08:00:01Z", updatedAt="2026-11-20T08:00:01Z"
                )
            ),
            "even second",
        ),
        (broken(lambda e: e["case"].update(expect={})), "at least one"),
        (broken(lambda e: e["case"].pop("expert")), "expert"),
        (broken(lambda e: e.update(agentId="acme.unknown")), "unknown agentId"),
        (broken(lambda e: e.update(project=7)), "project 7"),
        (
            broken(
                lambda e: e["case"]["expect"].update(
                    decisions={"verdict": "wrong", "shouldCall": [{"tool": "t" * 201, "args": {}}]}
                )
            ),
            "200",
        ),
    ],
)
def test_a_bad_fixture_fails_naming_its_file_and_index(tmp_path, entry, message):
    write_fixture(
        tmp_path, [good_entry() | {"case": good_entry()["case"] | {"id": "case-ok"}}, entry]
    )
    with pytest.raises(FixtureError) as raised:
        World(cases=5, fixtures_dir=tmp_path)
    assert "bad.json: case #1" in str(raised.value)
    assert message in str(raised.value)


def test_a_repeated_fixture_id_fails(tmp_path):
    write_fixture(tmp_path, [good_entry(), good_entry()])
    with pytest.raises(FixtureError, match="repeats"):
        World(cases=5, fixtures_dir=tmp_path)


def test_the_shipped_fixtures_load_from_a_copy(tmp_path):
    shutil.copytree(fixtures_dir(), tmp_path / "fixtures")
    assert len(World(cases=5, fixtures_dir=tmp_path / "fixtures").curated) == len(
        World(cases=5).curated
    )
