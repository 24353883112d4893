"""A data file's content given as JSON in memory (a session's `data`): checked and loaded as a file
is, refused at JSON pointers without a file or line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data_builders import AGENT, PROJECT, case, data, shop, version, write
from evalmock.world import CaseQuery, World, data_files
from evalmock.world.data_files import DataFileError, load_data, load_document


@pytest.fixture(scope="module")
def data_only() -> World:
    return World(cases=1, generated=False)


def refused(world: World, document: Any, **bounds: Any) -> list[str]:
    """Every problem as it is printed, in order."""
    with pytest.raises(DataFileError) as raised:
        load_document(document, world, **bounds)
    assert str(raised.value) == "\n".join(map(str, raised.value.problems))
    return [str(problem) for problem in raised.value.problems]


def session_data() -> dict[str, Any]:
    """What a test would post as a session's `data`, with three mistakes in it."""
    document = shop()
    cases = document["testSet"][0]["cases"]
    cases[2]["retierd"] = {"at": "2026-10-09T00:00:00Z"}
    cases[3]["id"] = cases[0]["id"]
    document["gradient"][0]["versions"][1]["version"] = 1
    return document


def test_a_document_in_memory_is_refused_at_json_paths_with_the_data_rules_words(
    data_only: World,
) -> None:
    assert refused(data_only, session_data()) == [
        '/testSet/0/cases/2/retierd: unknown key "retierd"; did you mean "retired"?',
        '/testSet/0/cases/3/id: id "case-000" is already in this list, at /testSet/0/cases/0; '
        "give one of them another id",
        "/gradient/0/versions/1/version: expected a version number above 1 (versions are listed "
        "oldest first, from 1), got 1",
    ]


def test_a_document_is_refused_as_the_same_content_in_a_file_is(
    data_only: World, tmp_path: Path
) -> None:
    path = write(tmp_path / "session.json", session_data())
    with pytest.raises(DataFileError) as from_file:
        load_data([path], data_only)
    # where a file's problem names another place in it, the document's names the place alone
    from_file_problems = [
        (p.pointer, p.message.replace(f"{path}#", "")) for p in from_file.value.problems
    ]
    with pytest.raises(DataFileError) as from_memory:
        load_document(session_data(), data_only)
    assert [(p.pointer, p.message) for p in from_memory.value.problems] == from_file_problems
    assert all(p.path is None and p.line is None for p in from_memory.value.problems)


def test_a_valid_document_loads_what_its_file_would(world: World, tmp_path: Path) -> None:
    document = shop()
    from_file = load_data([write(tmp_path / "shop.json", document)], world)
    from_memory = load_document(json.loads(json.dumps(document)), world)
    assert (from_memory.lists, from_memory.test_cases) == (from_file.lists, from_file.test_cases)
    assert from_memory.files == ()
    assert from_memory.summary() == "1 agent, 1 project, 6 cases, 1 evaluation test case"


def test_a_document_s_generation_follows_its_content(data_only: World) -> None:
    changed = shop()
    changed["testSet"][0]["cases"][0]["runId"] = "run-other"
    generations = [load_document(d, data_only).generation for d in (shop(), shop(), changed)]
    assert generations[0] == generations[1] != generations[2]
    assert generations[0] != 0


def test_an_empty_document_is_no_data(data_only: World) -> None:
    assert load_document({}, data_only).lists == ()


def test_a_document_is_checked_against_the_world_it_joins(world: World) -> None:
    (problem,) = refused(
        world, data(test_cases={world_uuid(world): [version(1, world_uuid(world))]})
    )
    assert problem.startswith("/gradient/0/test_case_uuid: test case ")
    assert "is a generated one" in problem


def world_uuid(world: World) -> str:
    return next(iter(world.evaluation_test_case_versions()))


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (None, '/: expected an object {"testSet": [...], "gradient": [...]} at the top'),
        ([], '/: expected an object {"testSet": [...], "gradient": [...]} at the top'),
        ("data", '/: expected an object {"testSet": [...], "gradient": [...]} at the top'),
        ({"testSet": 3}, "/testSet: expected a list, got 3"),
        ({"testSet": [{"agentId": AGENT}]}, "/testSet/0: "),
        ({"testSet": [], "filters": {"a": float("nan")}}, "/filters/a: nan is not a JSON number"),
        ({"testSet": [], "filters": {"a": 1 << 70}}, "/filters/a: the integer"),
        ({"testSet": [], "filters": {1: 2}}, "/filters: keys are text, got 1; quote it"),
        ({"testSet": [], "filters": {"a": "\ud800"}}, "/filters/a: the text holds an unpaired"),
        ({"testSet": [], "filters": {"a": b"x"}}, "/filters/a: binary data"),
        ({"testSet": [case("case-a", "2026-10-01T00:00:00Z")]}, "/testSet/0: "),
    ],
    ids=[
        "null",
        "list",
        "text",
        "not-a-list",
        "entry-without-keys",
        "nan",
        "beyond-64-bits",
        "non-text-key",
        "surrogate",
        "bytes",
        "case-as-entry",
    ],
)
def test_a_hostile_document_is_refused_never_a_crash(
    data_only: World, document: Any, expected: str
) -> None:
    problems = refused(data_only, document)
    assert problems[0].startswith(expected), problems


def test_a_document_nested_beyond_bounds_is_refused_without_recursion(data_only: World) -> None:
    nested: list[Any] = []
    for _ in range(100_000):  # far deeper than Python's recursion limit
        nested = [nested]
    (problem,) = refused(data_only, {"testSet": [], "filters": {"a": nested}})
    assert (
        problem == "/filters/a" + "/0" * (data_files.MAX_DEPTH - 1) + ": nested more than 200 deep"
    )


def test_a_document_with_too_many_values_is_refused(data_only: World) -> None:
    document = data(
        [(AGENT, PROJECT, [case(f"case-{n}", "2026-10-01T00:00:00Z") for n in range(9)])]
    )
    assert refused(data_only, document, max_values=100) == ["/: holds more than 100 values"]
    assert load_document(document, data_only, max_values=10_000).case_count == 9


def test_each_list_s_generation_follows_its_own_content_only(world: World) -> None:
    def generations(served: World) -> dict[tuple[str, str], int]:
        return {
            (agent, project): served.list_generation(CaseQuery(agent, project))
            for agent in served.agent_ids()
            for project in served.project_ids(agent)
        }

    first = world.with_data(load_document(two_lists(["case-a"], ["case-b"]), world))
    second = world.with_data(load_document(two_lists(["case-a", "case-c"], ["case-b"]), world))
    assert second.lists_changed_since(first) == [(AGENT, PROJECT)]
    before, after = generations(first), generations(second)
    assert [key for key in after if after[key] != before[key]] == [(AGENT, PROJECT)]
    assert 0 not in before.values()
    # the same content in another world object (a session's) has the same generations; another
    # seed's world another
    again = world.with_data(load_document(two_lists(["case-a"], ["case-b"]), world))
    assert generations(again) == before
    seeded = World(seed=world.seed + 1, cases=world.cases)
    assert set(generations(seeded).values()).isdisjoint(generations(world).values())
    assert world.list_generation(CaseQuery(AGENT, PROJECT)) == 0  # a list the world lacks


def two_lists(first: list[str], second: list[str]) -> dict[str, Any]:
    other = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    return data(
        [
            (AGENT, PROJECT, [case(i, f"2026-10-0{n + 1}T00:00:00Z") for n, i in enumerate(first)]),
            (
                AGENT,
                other,
                [
                    case(i, f"2026-10-0{n + 1}T00:00:00Z", project=other)
                    for n, i in enumerate(second)
                ],
            ),
        ]
    )
