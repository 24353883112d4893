"""Short-form cases: what a data file's case leaves out is filled in deterministically, consistently
with what it says and with every rule a served case and list keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from data_builders import AGENT, PROJECT, data, write
from evalmock.cli import main
from evalmock.contract import case_rules
from evalmock.contract.documents import TEST_SET
from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.data_files import DataFileError, load_data, load_document
from evalmock.world.rules import case_problems
from evalmock.world.short_form import FILLED, RETIREMENT
from evalmock.world.timeline import parse_rfc3339

from .helpers import walk

EVERYTHING = {"include_retired": True}
THREE = [{"kind": "hand"}, {}, {"retired": {}}]  # three valid cases, as a test would state them


@pytest.fixture(scope="module")
def data_only() -> World:
    return World(cases=1, generated=False)


def served(world: World, cases: list[dict[str, Any]], agent: str = AGENT, project: str = PROJECT):
    """The list's cases as the world serves them, newest first, walking pages of 7."""
    loaded = world.with_data(load_document(data([(agent, project, cases)]), world))
    return walk(loaded, CaseQuery(agent, project, **EVERYTHING), [7])


def breaches(case: dict[str, Any]) -> list[str]:
    """Every rule the case breaks: the world's (schema, stricter readings) and every page rule."""
    page = [str(breach) for rule in case_rules.RULES for breach in rule(case)]
    return case_problems(case) + page


def assert_a_valid_list(cases: list[dict[str, Any]]) -> None:
    """Every case keeps every rule; the list has unique ids and is newest first by addedAt."""
    assert [(case["id"], breaches(case)) for case in cases if breaches(case)] == []
    ids = [case["id"] for case in cases]
    assert len(set(ids)) == len(ids)
    added = [parse_rfc3339(case["addedAt"]) for case in cases]
    assert added == sorted(added, reverse=True)
    for case in cases:
        assert case["updatedAt"] >= case["addedAt"]
        assert case["id"].startswith("case-" if case["kind"] == "hand" else "corr-")


def test_what_a_short_form_case_may_leave_out_is_what_its_document_requires() -> None:
    schemas = TEST_SET.spec["components"]["schemas"]
    assert set(FILLED) == set(schemas["TestSetCase"]["required"])
    assert set(RETIREMENT) == set(schemas["Retirement"]["required"])


def test_three_short_cases_are_three_valid_cases_served_in_the_file_s_order(
    data_only: World,
) -> None:
    cases = served(data_only, THREE)
    assert_a_valid_list(cases)
    assert cases[0]["kind"] == "hand"
    assert "retired" in cases[2] and "retired" not in cases[0] and "retired" not in cases[1]
    assert cases[2]["updatedAt"] == cases[2]["retired"]["at"] > cases[2]["addedAt"]
    assert cases[0]["expert"] is True
    assert {case["projectId"] for case in cases} == {PROJECT}
    # the default list hides the retired case, as for any retired case
    loaded = data_only.with_data(load_document(data([(AGENT, PROJECT, THREE)]), data_only))
    assert [case["id"] for case in loaded.iter_cases(CaseQuery(AGENT, PROJECT))] == [
        case["id"] for case in cases[:2]
    ]


def test_the_same_file_gives_the_same_bytes_and_another_seed_other_ones(tmp_path: Path) -> None:
    def encoded(world: World) -> list[bytes]:
        return [orjson.dumps(case) for case in served(world, THREE * 5)]

    path = write(tmp_path / "short.yaml", data([(AGENT, PROJECT, THREE * 5)]))
    first = World(seed=7, cases=1, generated=False)
    from_file = first.with_data(load_data([path], first))
    from_file_cases = walk(from_file, CaseQuery(AGENT, PROJECT, **EVERYTHING), [100])
    assert encoded(first) == encoded(World(seed=7, cases=1, generated=False))
    assert encoded(first) == [orjson.dumps(case) for case in from_file_cases]
    assert encoded(first) != encoded(World(seed=8, cases=1, generated=False))


def test_a_case_that_leaves_nothing_out_is_served_as_written(data_only: World) -> None:
    whole = served(data_only, [{}])[0]
    reordered = dict(reversed(list(whole.items())))
    assert json.dumps(served(data_only, [reordered])[0]) == json.dumps(reordered)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"id": "case-refund"}, {"kind": "hand", "expert": True}),
        ({"id": "corr-7"}, {"kind": "correction"}),
        ({"kind": "correction", "expert": True}, {"expert": True}),
        (
            {"updatedAt": "2026-10-01T12:00:00Z"},
            {"addedAt": "2026-10-01T12:00:00Z", "updatedAt": "2026-10-01T12:00:00Z"},
        ),
        (
            {"retired": {"at": "2026-10-01T12:00:00Z"}},
            {"updatedAt": "2026-10-01T12:00:00Z"},
        ),
        (
            {"retired": {"reason": "Duplicate."}, "updatedAt": "2026-10-01T12:00:00Z"},
            {"updatedAt": "2026-10-01T12:00:00Z"},
        ),
        (
            {"addedAt": "2026-10-01T12:00:00Z", "retired": {}},
            {"addedAt": "2026-10-01T12:00:00Z"},
        ),
        (
            {"expect": {"answer": {"verdict": "right"}}},
            {"expect": {"answer": {"verdict": "right"}}},
        ),
    ],
    ids=[
        "hand-by-id",
        "correction-by-id",
        "correction-expert",
        "active-updated-at",
        "retired-at",
        "retired-updated-at",
        "retired-added-at",
        "expect",
    ],
)
def test_what_is_filled_agrees_with_what_the_case_says(
    data_only: World, given: dict[str, Any], expected: dict[str, Any]
) -> None:
    (case,) = served(data_only, [given])
    assert_a_valid_list([case])
    assert {key: case[key] for key in expected} == expected
    assert {key: case[key] for key in given if key != "retired"} == {
        key: value for key, value in given.items() if key != "retired"
    }
    if "retired" in given:
        assert given["retired"].items() <= case["retired"].items()


def test_filled_cases_join_a_world_list_without_its_ids_or_seconds(world: World) -> None:
    own = list(world.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, **EVERYTHING)))
    # enough cases that the filled times run down among the world's own ones
    mine = [{"kind": "hand" if n % 3 else "correction"} for n in range(600)]
    cases = served(world, mine, EXAMPLE_AGENT, EXAMPLE_PROJECT)
    assert_a_valid_list(cases)
    assert len(cases) == len(own) + len(mine)
    assert parse_rfc3339(cases[-1]["addedAt"]) < parse_rfc3339(own[0]["addedAt"])
    theirs = {case["id"] for case in own}
    assert [case for case in cases if case["id"] in theirs] == own


def test_filled_ids_and_times_avoid_the_ones_the_file_gives(data_only: World) -> None:
    (first,) = served(data_only, [{}])
    taken = {"id": first["id"], "addedAt": first["addedAt"], "kind": first["kind"]}
    cases = served(data_only, [{}, {**taken, "expect": first["expect"]}])
    assert_a_valid_list(cases)
    assert cases[0]["id"] != cases[1]["id"] and cases[0]["addedAt"] != cases[1]["addedAt"]


def test_a_short_form_case_is_still_refused_for_what_it_says(data_only: World) -> None:
    document = data([(AGENT, PROJECT, [{}, {"kind": "hand", "id": "corr-1"}, {"retierd": {}}])])
    with pytest.raises(DataFileError) as raised:
        load_document(document, data_only)
    assert [str(problem) for problem in raised.value.problems] == [
        '/testSet/0/cases/1/id: a hand case\'s id starts with case-, got "corr-1"; write an id '
        'such as "case-refund-crash", or make it kind: correction',
        '/testSet/0/cases/2/retierd: unknown key "retierd"; did you mean "retired"?',
    ]


def test_a_short_export_serves_the_very_bytes_of_a_whole_one(tmp_path: Path) -> None:
    paths = {}
    for form, extra in (("whole", []), ("short", ["--short"])):
        paths[form] = tmp_path / f"{form}.json"
        command = ["fixtures", "export", "--cases", "40", "--include-retired", *extra]
        assert main([*command, "-o", str(paths[form])]) == 0
    assert paths["short"].stat().st_size < paths["whole"].stat().st_size * 0.9
    short_cases = [
        case
        for entry in json.loads(paths["short"].read_text(encoding="utf-8"))["testSet"]
        for case in entry["cases"]
    ]
    # the generated cases are short; a curated one whose keys are in another order stays whole
    whole = [case["id"] for case in short_cases if "projectId" in case or "updatedAt" in case]
    assert whole and all("-fixture-" in case_id for case_id in whole)
    assert len(whole) < len(short_cases) / 10
    served = []
    for form in ("whole", "short"):
        world = World(cases=1, generated=False)
        loaded = world.with_data(load_data([paths[form]], world))
        served.append(
            [
                orjson.dumps(case)
                for agent in loaded.agent_ids()
                for project in loaded.project_ids(agent)
                for case in loaded.iter_cases(CaseQuery(agent, project, **EVERYTHING))
            ]
        )
    assert served[0] == served[1]
    assert len(served[0]) > 100


def test_without_the_short_form_a_case_that_leaves_a_field_out_is_refused(
    data_only: World, tmp_path: Path
) -> None:
    path = write(tmp_path / "recorded.json", data([(AGENT, PROJECT, [{"kind": "hand"}])]))
    assert load_data([path], data_only).case_count == 1
    with pytest.raises(DataFileError) as raised:
        load_data([path], data_only, short_form=False)  # a recording: nothing is made up
    assert (
        "/testSet/0/cases/0",
        '"id" is missing; add it, it is required here',
    ) in [(p.pointer, p.message) for p in raised.value.problems]
