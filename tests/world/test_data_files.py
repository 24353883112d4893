"""Data files (`evalmock serve --data`): loaded into the world, merged by addedAt, or refused with
every problem."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from data_builders import AGENT, PROJECT, TEST_CASE, case, data, shop, version, write
from evalmock.cli import main
from evalmock.world import CaseQuery, World, data_files
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.data_files import DataFileError, load_data
from evalmock.world.gradient import EXAMPLE_TEST_CASE
from evalmock.world.timeline import rfc3339

from .helpers import every_case

EVERYTHING = {"include_retired": True}


@pytest.fixture(scope="module")
def data_only() -> World:
    return World(cases=1, generated=False)


def loaded(world: World, *paths: Path) -> World:
    return world.with_data(load_data(paths, world))


def refusals(world: World, *paths: Path) -> list[tuple[str, str]]:
    """(pointer, message) of every problem, in the order they are listed."""
    with pytest.raises(DataFileError) as raised:
        load_data(paths, world)
    return [(problem.pointer, problem.message) for problem in raised.value.problems]


def the_refusal(
    world: World, tmp_path: Path, document: Any, suffix: str = ".json"
) -> tuple[str, str]:
    (only,) = refusals(world, write(tmp_path / f"data{suffix}", document))
    return only


# -- loading
# --------------------------------------------------------------------------------------------------
def test_a_data_file_adds_its_agent_project_cases_and_test_case_to_the_world(
    world: World, tmp_path: Path
) -> None:
    document = shop()
    served = loaded(world, write(tmp_path / "shop.yaml", document))
    assert served.agent_ids() == [*world.agent_ids(), AGENT]
    assert served.project_ids(AGENT) == [PROJECT]
    expected = sorted(document["testSet"][0]["cases"], key=lambda c: c["addedAt"], reverse=True)
    assert list(served.iter_cases(CaseQuery(AGENT, PROJECT, **EVERYTHING))) == expected
    assert served.evaluation_test_case_versions()[TEST_CASE] == (1, 2)
    assert served.evaluation_test_case(TEST_CASE.upper().lower(), None) == version(2)
    assert (
        served.evaluation_test_case_versions().keys()
        >= world.evaluation_test_case_versions().keys()
    )
    assert list(served.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT))) == list(
        world.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT))
    )


def test_json_and_yaml_data_load_alike(data_only: World, tmp_path: Path) -> None:
    from_json = load_data([write(tmp_path / "shop.json", shop())], data_only)
    from_yaml = load_data([write(tmp_path / "shop.yml", shop())], data_only)
    assert (from_json.lists, from_json.test_cases) == (from_yaml.lists, from_yaml.test_cases)


def test_unquoted_yaml_timestamps_stay_strings(data_only: World, tmp_path: Path) -> None:
    quoted = write(tmp_path / "quoted.yaml", shop(2)).read_text(encoding="utf-8")
    text = re.sub(r"'(\d{4}-\d\d-\d\dT[\d:]+Z)'", r"\1", quoted)
    assert "addedAt: 2026-10-01T12:00:00Z" in text
    (tmp_path / "unquoted.yaml").write_text(text, encoding="utf-8")
    served = loaded(data_only, tmp_path / "unquoted.yaml")
    assert [c["addedAt"] for c in served.iter_cases(CaseQuery(AGENT, PROJECT, **EVERYTHING))] == [
        "2026-10-02T12:00:00Z",
        "2026-10-01T12:00:00Z",
    ]


def test_one_list_given_in_two_files_is_one_list(data_only: World, tmp_path: Path) -> None:
    first = write(
        tmp_path / "a.json", data([(AGENT, PROJECT, [case("case-a", "2026-10-01T00:00:00Z")])])
    )
    second = write(
        tmp_path / "b.json",
        data([(AGENT, PROJECT.upper(), [case("case-b", "2026-10-02T00:00:00Z")])]),
    )
    served = loaded(data_only, first, second)
    assert [c["id"] for c in served.iter_cases(CaseQuery(AGENT, PROJECT))] == ["case-b", "case-a"]
    assert served.project_ids(AGENT) == [PROJECT]


def test_user_cases_sit_among_the_generated_ones_by_added_at(world: World, tmp_path: Path) -> None:
    generated = list(world.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, **EVERYTHING)))
    between = rfc3339(_seconds(generated[10]["addedAt"]) - 1)  # just older than the 11th case
    newest = "2027-01-01T00:00:00Z"
    mine = [
        case("case-mine-old", between, project=EXAMPLE_PROJECT),
        case("corr-mine-new", newest, project=EXAMPLE_PROJECT),
    ]
    served = loaded(
        world, write(tmp_path / "mine.json", data([(EXAMPLE_AGENT, EXAMPLE_PROJECT, mine)]))
    )
    listed = list(served.iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, **EVERYTHING)))
    assert listed == sorted(
        every_case(world, EXAMPLE_AGENT, EXAMPLE_PROJECT) + mine,
        key=lambda c: c["addedAt"],
        reverse=True,
    )
    # Just older than the 11th of the world's cases, and one newer case of the user's before all of
    # them.
    assert [c["id"] for c in listed].index("case-mine-old") == 12 and listed[0][
        "id"
    ] == "corr-mine-new"
    facts = {
        f.project_id: f.active_cases for f in served.project_facts() if f.agent_id == EXAMPLE_AGENT
    }
    before = {
        f.project_id: f.active_cases for f in world.project_facts() if f.agent_id == EXAMPLE_AGENT
    }
    assert facts[EXAMPLE_PROJECT] == before[EXAMPLE_PROJECT] + 2


def test_a_data_only_world_holds_only_the_user_data(data_only: World, tmp_path: Path) -> None:
    served = loaded(data_only, write(tmp_path / "shop.json", shop()))
    assert served.agent_ids() == [AGENT] and not served.has_agent(EXAMPLE_AGENT)
    assert served.evaluation_test_case_versions() == {TEST_CASE: (1, 2)}
    assert served.evaluation_test_case(EXAMPLE_TEST_CASE, None) is None
    assert served.curated == []


def test_a_list_without_cases_adds_an_empty_project(data_only: World, tmp_path: Path) -> None:
    served = loaded(data_only, write(tmp_path / "empty.json", data([(AGENT, PROJECT, [])])))
    assert served.project_ids(AGENT) == [PROJECT]
    assert served.count_cases(CaseQuery(AGENT, PROJECT, **EVERYTHING)) == 0


def test_new_data_replaces_the_old_and_keeps_the_generated(world: World, tmp_path: Path) -> None:
    first = loaded(world, write(tmp_path / "one.json", shop()))
    second = first.with_data(load_data([write(tmp_path / "two.json", data())], first))
    assert second.agent_ids() == world.agent_ids()
    assert TEST_CASE not in second.evaluation_test_case_versions()


def test_the_data_generation_follows_the_files_content(data_only: World, tmp_path: Path) -> None:
    path = write(tmp_path / "shop.json", shop())
    once, again = load_data([path], data_only), load_data([path], data_only)
    assert once.generation == again.generation != 0
    write(path, shop(5))
    assert load_data([path], data_only).generation != once.generation
    assert data_only.data.generation == 0


def test_an_export_edited_and_loaded_serves_what_the_file_says(tmp_path: Path) -> None:
    path = tmp_path / "world.json"
    assert (
        main(
            [
                "fixtures",
                "export",
                "--seed",
                "3",
                "--cases",
                "20",
                "--include-retired",
                "-o",
                str(path),
            ]
        )
        == 0
    )
    document = json.loads(path.read_text(encoding="utf-8"))
    edited = document["testSet"][0]["cases"]
    edited[0]["expect"] = {
        "answer": {"verdict": "wrong", "shouldSay": "The answer the UI broke on."}
    }
    del edited[-1]
    document["gradient"][0]["versions"][-1]["name"] = "Renamed"
    write(path, document)
    served = loaded(World(seed=3, cases=1, generated=False), path)
    for entry in document["testSet"]:
        assert (
            list(served.iter_cases(CaseQuery(entry["agentId"], entry["projectId"], **EVERYTHING)))
            == entry["cases"]
        )
    for entry in document["gradient"]:
        uuid, versions = entry["test_case_uuid"], entry["versions"]
        assert [
            served.evaluation_test_case(uuid, n) for n in range(1, len(versions) + 1)
        ] == versions
    assert (
        served.evaluation_test_case(document["gradient"][0]["test_case_uuid"], None)["name"]
        == "Renamed"
    )


def test_an_export_of_one_test_case_loads(data_only: World, tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    assert (
        main(["fixtures", "export", "--test-case", EXAMPLE_TEST_CASE.upper(), "-o", str(path)]) == 0
    )
    served = loaded(World(generated=False), path)
    assert served.evaluation_test_case_versions() == {EXAMPLE_TEST_CASE: (1, 2, 3)}
    assert served.agent_ids() == []


# -- refusals: the file
# --------------------------------------------------------------------------------------------------
def test_a_missing_file_is_refused(data_only: World, tmp_path: Path) -> None:
    assert refusals(data_only, tmp_path / "nowhere.yaml") == [
        ("", "cannot read: No such file or directory")
    ]


def test_invalid_json_is_refused_at_its_line(data_only: World, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(
        '{\n  "testSet": [\n    {"agentId": "a",}\n  ]\n}\n', encoding="utf-8"
    )
    with pytest.raises(DataFileError) as raised:
        load_data([tmp_path / "bad.json"], data_only)
    assert [str(p) for p in raised.value.problems] == [
        f"{tmp_path / 'bad.json'}:3:21: /: not valid JSON: Expecting property name enclosed in "
        "double quotes"
    ]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "empty.json",
            "",
            'the file is empty; write an object {"testSet": [...], "gradient": [...]} (either may '
            "be "
            "left out), as `evalmock fixtures export -o FILE` writes",
        ),
        (
            "empty.yaml",
            "# my cases, later\n",
            "the file is empty; write a mapping with testSet: and gradient: lists "
            "(either may be left out), as `evalmock fixtures export -o FILE` writes",
        ),
        (
            "blank.yaml",
            "\n  \n",
            "the file is empty; write a mapping with testSet: and gradient: lists (either may be "
            "left out), as `evalmock fixtures export -o FILE` writes",
        ),
        (
            "null.json",
            "null",
            'expected an object {"testSet": [...], "gradient": [...]} at the top (either may be '
            "left out), got null",
        ),
    ],
)
def test_an_empty_file_says_it_is_empty_and_what_to_write(
    data_only: World, tmp_path: Path, name: str, text: str, expected: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert refusals(data_only, tmp_path / name) == [("", expected)]


def test_invalid_yaml_is_refused_at_its_line(data_only: World, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "testSet:\n  - agentId: a\n   projectId: b\n", encoding="utf-8"
    )
    with pytest.raises(DataFileError) as raised:
        load_data([tmp_path / "bad.yaml"], data_only)
    (problem,) = raised.value.problems
    assert (problem.line, problem.column, problem.pointer) == (3, 4, "")
    assert problem.message.startswith("not valid YAML: ")
    assert str(problem).startswith(f"{tmp_path / 'bad.yaml'}:3:4: /: not valid YAML: ")


def test_text_that_is_not_utf8_is_refused(data_only: World, tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes("testSet: []\nnote: caf\xe9\n".encode("latin-1"))
    assert refusals(data_only, tmp_path / "latin1.yaml") == [
        ("", "not UTF-8 text: invalid continuation byte at byte 21")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"testSet": [], "seed": NaN}', ("", "not valid JSON: NaN is not a JSON number")),
        (
            '{"testSet": [], "seed": 18446744073709551616}',
            ("/seed", "the integer 18446744073709551616 is beyond 64 bits"),
        ),
        (
            '{"testSet": [], "filters": {"a": ' * 1 + "[" * 250 + "]" * 250 + "}}",
            ("/filters/a" + "/0" * 199, "nested more than 200 deep"),
        ),
    ],
    ids=["nan", "beyond-64-bits", "too-deep"],
)
def test_json_values_the_server_cannot_send_are_refused(
    data_only: World, tmp_path: Path, text: str, expected: tuple[str, str]
) -> None:
    (tmp_path / "values.json").write_text(text, encoding="utf-8")
    assert refusals(data_only, tmp_path / "values.json") == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("testSet: []\nfilters: {1: one}\n", ("/filters", "keys are text, got 1; quote it")),
        (
            "testSet: []\nfilters: {a: !!binary aGk=}\n",
            ("/filters/a", "binary data (!!binary) is not a JSON value; write it as text"),
        ),
        (
            "testSet: []\nfilters: {a: !!set {x, y}}\n",
            ("/filters/a", "a set (!!set) is not a JSON value; write it as text"),
        ),
        ("testSet: []\nfilters: {a: .nan}\n", ("/filters/a", "nan is not a JSON number")),
    ],
    ids=["non-string-key", "binary", "set", "nan"],
)
def test_yaml_that_is_not_json_is_refused(
    data_only: World, tmp_path: Path, text: str, expected: tuple[str, str]
) -> None:
    (tmp_path / "values.yaml").write_text(text, encoding="utf-8")
    assert refusals(data_only, tmp_path / "values.yaml") == [expected]


def test_yaml_aliases_that_multiply_a_file_beyond_bounds_are_refused(
    data_only: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(data_files, "MAX_VALUES", 1_000)
    lines = ["testSet: []", "filters:", "  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    # 10,000 values
    lines += [f"  a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 4)]
    (tmp_path / "aliases.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert refusals(data_only, tmp_path / "aliases.yaml") == [
        ("", "holds more than 1,000 values (YAML aliases repeat all they name)")
    ]


# -- refusals: the frame
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"testset": []}, ("/testset", 'unknown key "testset"; did you mean "testSet"?')),
        (
            [],
            (
                "",
                'expected an object {"testSet": [...], "gradient": [...]} at the top (either may '
                "be left out), "
                "got []",
            ),
        ),
        (
            {"testSet": [{"projectId": PROJECT, "cases": []}]},
            ("/testSet/0", '"agentId" is missing; add it, it is required here'),
        ),
        (
            data([("shop/checkout", PROJECT, [])]),
            (
                "/testSet/0/agentId",
                "expected text that fits in a path segment (no slash, no control characters), got "
                '"shop/checkout"',
            ),
        ),
        (
            data([("shop\n", PROJECT, [])]),
            (
                "/testSet/0/agentId",
                "expected text that fits in a path segment (no slash, no control characters), got "
                '"shop\\n"',
            ),
        ),
        (
            data([(AGENT, "not-a-uuid", [])]),
            (
                "/testSet/0/projectId",
                'expected a UUID such as "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", got "not-a-uuid"',
            ),
        ),
        (
            {"testSet": [{"agentId": AGENT, "projectId": PROJECT, "cases": {}}]},
            ("/testSet/0/cases", "expected a list, got {}"),
        ),
        (
            data(test_cases={TEST_CASE: []}),
            ("/gradient/0/versions", "has 0 items, must have at least 1"),
        ),
    ],
    ids=[
        "unknown-key",
        "not-an-object",
        "no-agent",
        "agent-with-slash",
        "agent-with-newline",
        "project-not-uuid",
        "cases-not-a-list",
        "no-versions",
    ],
)
def test_a_frame_that_breaks_the_schema_is_refused(
    data_only: World, tmp_path: Path, document: Any, expected: tuple[str, str]
) -> None:
    assert the_refusal(data_only, tmp_path, document) == expected


# -- refusals: each case
# --------------------------------------------------------------------------------------------------
HAND = case("case-1", "2026-10-01T12:00:00Z")
CORRECTION = case("corr-1", "2026-10-01T12:00:00Z")
ARGS_4003 = {
    "decisions": {"verdict": "wrong", "shouldCall": [{"tool": "t", "args": {"k": "x" * 3995}}]}
}


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ({**HAND, "kind": "robot"}, ("/kind", 'expected one of "correction", "hand", got "robot"')),
        (
            {**HAND, "kind": "Hand"},
            ("/kind", 'expected one of "correction", "hand", got "Hand"; did you mean "hand"?'),
        ),
        (
            {**HAND, "addedBy": {"kind": "user"}},
            ("/addedBy", '"id" is missing; add it, it is required here'),
        ),
        ({**HAND, "runId": None}, ("/runId", "expected text (a string), got null")),
        (
            {**HAND, "id": "hand-1"},
            (
                "/id",
                'a hand case\'s id starts with case-, got "hand-1"; write an id such as '
                '"case-refund-crash", or make it kind: correction',
            ),
        ),
        (
            {**CORRECTION, "id": "case-2"},
            (
                "/id",
                "a correction's case has the correction's id, not a case- id, got \"case-2\"; "
                "write the correction's "
                "id, or make it kind: hand",
            ),
        ),
        (
            {**HAND, "expect": {}},
            (
                "/expect",
                "expect needs at least one of decisions, answer, items, got {}; add one, "
                "such as answer with a verdict",
            ),
        ),
        (
            {**HAND, "updatedAt": "2026-10-02T12:00:00Z"},
            (
                "/updatedAt",
                'an active case\'s updatedAt is its addedAt, "2026-10-01T12:00:00Z", got '
                '"2026-10-02T12:00:00Z"; write "2026-10-01T12:00:00Z", or retire the case',
            ),
        ),
        (
            case("corr-1", "2026-10-01T12:00:00Z", retired_at="2026-09-01T00:00:00Z"),
            (
                "/retired/at",
                'retired.at is later than addedAt "2026-10-01T12:00:00Z", got '
                '"2026-09-01T00:00:00Z"',
            ),
        ),
        (
            {**CORRECTION, "expert": False},
            (
                "/expert",
                "expert is true or left out, got false; write expert: true, or remove the key",
            ),
        ),
        (
            {**HAND, "expert": False},
            ("/expert", "every hand case is an expert's case: write expert: true (got false)"),
        ),
        (
            {
                **CORRECTION,
                "addedAt": "2026-10-01T12:00:00+00:00",
                "updatedAt": "2026-10-01T12:00:00+00:00",
            },
            (
                "/addedAt",
                'expected a UTC date-time in whole seconds such as "2026-11-20T09:15:02Z", got '
                '"2026-10-01T12:00:00+00:00"',
            ),
        ),
        (
            {**CORRECTION, "addedAt": "yesterday", "updatedAt": "yesterday"},
            (
                "/addedAt",
                'expected an RFC 3339 date-time such as "2026-11-20T09:15:02Z", got "yesterday"',
            ),
        ),
        (
            {**CORRECTION, "expect": {"items": [{"key": "a", "rank": 1, "verdict": "right"}]}},
            ("/expect/items/0/rank", "expected 0 (ranks 0..n-1 in order), got 1"),
        ),
        (
            {**CORRECTION, "expect": ARGS_4003},
            (
                "/expect/decisions/shouldCall/0/args",
                "shouldCall args are at most 4000 characters of canonical JSON, got 4003 "
                "characters; compare fewer "
                "argument fields",
            ),
        ),
    ],
    ids=[
        "schema-enum",
        "schema-enum-letter-case",
        "schema-required",
        "schema-null",
        "hand-id",
        "correction-id",
        "expect-part",
        "updated-at",
        "retired-before-added",
        "expert",
        "hand-expert",
        "utc",
        "not-a-date-time",
        "rank-order",
        "args-size",
    ],
)
def test_a_case_that_breaks_a_rule_is_refused_where_it_breaks_it(
    data_only: World, tmp_path: Path, bad: dict[str, Any], expected: tuple[str, str]
) -> None:
    problems = refusals(data_only, write(tmp_path / "data.json", data([(AGENT, PROJECT, [bad])])))
    assert (f"/testSet/0/cases/0{expected[0]}", expected[1]) in problems


PYTHON_SPELLING = re.compile(r"\b(True|False|None)\b|(?<![A-Za-z])'[^'\s]*'|\[\'|\{\'")
BROKEN_CASES = [
    {**HAND, "kind": "robot"},
    {**HAND, "runId": None},
    {**HAND, "expert": False},
    {**CORRECTION, "expert": False},
    {**HAND, "expect": {}},
    {**HAND, "id": "hand-1"},
    {**HAND, "addedBy": {"kind": "user", "id": ["u"]}},
    {**CORRECTION, "retierd": None},
    {**CORRECTION, "expect": {"answer": {"verdict": False}}},
]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_no_message_speaks_python_or_repeats_itself(
    data_only: World, tmp_path: Path, suffix: str
) -> None:
    problems = refusals(
        data_only, write(tmp_path / f"data{suffix}", data([(AGENT, PROJECT, BROKEN_CASES)]))
    )
    assert len(problems) >= len(BROKEN_CASES)
    for _, message in problems:
        assert not PYTHON_SPELLING.search(message), message
        halves = re.split(r"[:;] ", message)
        assert len(halves) == len(set(halves)), message


def test_an_empty_expect_says_which_parts_it_needs_once(data_only: World, tmp_path: Path) -> None:
    problems = refusals(
        data_only, write(tmp_path / "data.yaml", data([(AGENT, PROJECT, [{**HAND, "expect": {}}])]))
    )
    assert [message for where, message in problems if where.endswith("/expect")] == [
        "expect needs at least one of decisions, answer, items, got {}; add one, such as answer "
        "with a verdict"
    ]


@pytest.mark.parametrize(
    ("where", "key", "meant"),
    [
        ("", "retierd", "retired"),
        ("/expect/answer", "shoudlSay", "shouldSay"),
        ("/addedBy", "kidn", "kind"),
        ("/expect/decisions/shouldCall/0", "argz", "args"),
    ],
)
def test_a_misspelled_key_inside_a_case_is_refused_with_a_guess(
    data_only: World, tmp_path: Path, where: str, key: str, meant: str
) -> None:
    bad = case(
        "corr-1",
        "2026-10-01T12:00:00Z",
        expect={
            "decisions": {"verdict": "wrong", "shouldCall": [{"tool": "t", "args": {}}]},
            "answer": {"verdict": "wrong", "shouldSay": "Say it."},
        },
    )
    node = bad
    for part in where.split("/")[1:]:
        node = node[int(part)] if part.isdigit() else node[part]
    node[key] = {"reason": "Superseded."}
    path = write(tmp_path / "data.yaml", data([(AGENT, PROJECT, [bad])]))
    with pytest.raises(DataFileError) as raised:
        load_data([path], data_only)
    problems = [p for p in raised.value.problems if p.pointer == f"/testSet/0/cases/0{where}/{key}"]
    assert [p.message for p in problems] == [f'unknown key "{key}"; did you mean "{meant}"?']
    assert (
        path.read_text(encoding="utf-8")
        .splitlines()[problems[0].line - 1]
        .strip()
        .startswith(f"{key}:")
    )


def test_a_misspelled_key_inside_a_version_is_refused_with_a_guess(
    data_only: World, tmp_path: Path
) -> None:
    document = data(
        test_cases={TEST_CASE: [version(1, nmae="x", star_metric={"nam": "Correctness"})]}
    )
    assert sorted(refusals(data_only, write(tmp_path / "data.json", document))) == [
        ("/gradient/0/versions/0/nmae", 'unknown key "nmae"; did you mean "name"?'),
        ("/gradient/0/versions/0/star_metric/nam", 'unknown key "nam"; did you mean "name"?'),
    ]


def test_a_key_like_no_known_one_lists_the_known_keys(data_only: World, tmp_path: Path) -> None:
    document = data(
        [
            (
                AGENT,
                PROJECT,
                [{**CORRECTION, "addedBy": {"kind": "user", "id": "u", "colour": "red"}}],
            )
        ]
    )
    assert the_refusal(data_only, tmp_path, document) == (
        "/testSet/0/cases/0/addedBy/colour",
        'unknown key "colour"; remove it, or write one of "kind", "id"',
    )


def test_tool_args_stay_free_form(data_only: World, tmp_path: Path) -> None:
    free = case(
        "corr-1",
        "2026-10-01T12:00:00Z",
        expect={
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [
                    {"tool": "t", "args": {"anything": {"nested": [1]}, "retierd": True}}
                ],
            }
        },
    )
    assert loaded(
        data_only, write(tmp_path / "data.json", data([(AGENT, PROJECT, [free])]))
    ).agent_ids() == [AGENT]


def test_a_case_of_another_project_than_its_list_is_refused(
    data_only: World, tmp_path: Path
) -> None:
    other = "11111111-2222-4333-8444-555555555555"
    document = data([(AGENT, PROJECT, [case("case-1", "2026-10-01T12:00:00Z", project=other)])])
    assert the_refusal(data_only, tmp_path, document) == (
        "/testSet/0/cases/0/projectId",
        f'expected the list\'s projectId "{PROJECT}", got "{other}"',
    )


# -- refusals: each list
# --------------------------------------------------------------------------------------------------
def test_an_id_twice_in_one_list_is_refused_even_across_files(
    data_only: World, tmp_path: Path
) -> None:
    first = write(
        tmp_path / "a.json", data([(AGENT, PROJECT, [case("case-1", "2026-10-01T12:00:00Z")])])
    )
    second = write(
        tmp_path / "b.json", data([(AGENT, PROJECT, [case("case-1", "2026-10-02T12:00:00Z")])])
    )
    assert refusals(data_only, first, second) == [
        (
            "/testSet/0/cases/0/id",
            f'id "case-1" is already in this list, at {first}#/testSet/0/cases/0; give one of '
            "them another id",
        )
    ]


def test_the_same_id_in_two_lists_is_fine(data_only: World, tmp_path: Path) -> None:
    other = "11111111-2222-4333-8444-555555555555"
    document = data(
        [
            (AGENT, PROJECT, [case("case-1", "2026-10-01T12:00:00Z")]),
            (AGENT, other, [case("case-1", "2026-10-01T12:00:00Z", project=other)]),
        ]
    )
    assert loaded(data_only, write(tmp_path / "two.json", document)).project_ids(AGENT) == [
        PROJECT,
        other,
    ]


def test_cases_sharing_an_added_at_are_served_in_the_file_s_order(
    data_only: World, tmp_path: Path
) -> None:
    tied = [
        case("corr-b", "2026-10-01T12:00:00Z"),
        case("case-older", "2026-09-30T12:00:00Z"),
        case("corr-a", "2026-10-01T12:00:00Z"),
        case("corr-c", "2026-10-01T12:00:00Z"),
    ]
    path = write(tmp_path / "a.json", data([(AGENT, PROJECT, tied)]))
    world = data_only.with_data(load_data([path], data_only))
    served = world.iter_cases(CaseQuery(AGENT, PROJECT))
    assert [served_case["id"] for served_case in served] == [
        "corr-b",
        "corr-a",
        "corr-c",
        "case-older",
    ]


def test_the_id_of_a_generated_case_is_refused_in_its_list(world: World, tmp_path: Path) -> None:
    own = world.own_list(EXAMPLE_AGENT, EXAMPLE_PROJECT)
    taken = own.factory.case_id(7)
    kind_prefix = taken[:5]
    mine = case(f"{kind_prefix}x", "2027-01-01T00:00:00Z", project=EXAMPLE_PROJECT, id=taken)
    if taken.startswith("case-"):
        mine.update(kind="hand", expert=True)
    document = data([(EXAMPLE_AGENT, EXAMPLE_PROJECT, [mine])])
    assert the_refusal(world, tmp_path, document) == (
        "/testSet/0/cases/0/id",
        f"id {json.dumps(taken)} is a generated case of this list; give the case another "
        "id, or serve an export with --data-only",
    )
    assert loaded(
        World(cases=1, generated=False), write(tmp_path / "alone.json", document)
    ).agent_ids() == [EXAMPLE_AGENT]


def test_the_id_of_a_curated_case_is_refused_in_its_list(world: World, tmp_path: Path) -> None:
    curated = world.curated[0]
    mine = case("case-x", "2027-01-01T00:00:00Z", project=curated.project_id, id=curated.case["id"])
    mine.update(kind=curated.case["kind"], expert=True)
    document = data([(curated.agent_id, curated.project_id, [mine])])
    assert the_refusal(world, tmp_path, document) == (
        "/testSet/0/cases/0/id",
        f"id {json.dumps(curated.case['id'])} is a curated case of this list "
        "(fixtures/); give the case another id",
    )


def test_an_added_at_of_a_generated_case_is_refused_in_its_list(
    world: World, tmp_path: Path
) -> None:
    own = world.own_list(EXAMPLE_AGENT, EXAMPLE_PROJECT)
    taken = rfc3339(own.factory.added_at(3))
    document = data(
        [(EXAMPLE_AGENT, EXAMPLE_PROJECT, [case("case-mine", taken, project=EXAMPLE_PROJECT)])]
    )
    assert the_refusal(world, tmp_path, document) == (
        "/testSet/0/cases/0/addedAt",
        f"addedAt {json.dumps(taken)} is also the addedAt of this list's generated case "
        f"{json.dumps(own.factory.case_id(3))}; a list is "
        "ordered by addedAt, so pick another second",
    )


def test_an_added_at_of_a_curated_case_is_refused_in_its_list(world: World, tmp_path: Path) -> None:
    curated = world.curated[0]
    taken = curated.case["addedAt"]
    document = data(
        [
            (
                curated.agent_id,
                curated.project_id,
                [case("case-mine", taken, project=curated.project_id)],
            )
        ]
    )
    assert the_refusal(world, tmp_path, document) == (
        "/testSet/0/cases/0/addedAt",
        f"addedAt {json.dumps(taken)} is also the addedAt of this list's curated case "
        f"{json.dumps(curated.case['id'])}; a list is ordered by addedAt, so pick "
        "another second",
    )


# -- refusals: evaluation test cases
# --------------------------------------------------------------------------------------------------
def test_a_version_that_breaks_the_document_schema_is_refused(
    data_only: World, tmp_path: Path
) -> None:
    document = data(
        test_cases={TEST_CASE: [version(1, star_metric={"success_threshold_pct": 123})]}
    )
    assert the_refusal(data_only, tmp_path, document) == (
        "/gradient/0/versions/0/star_metric/success_threshold_pct",
        "expected at most 100, got 123",
    )


def test_a_uint64_given_as_a_number_says_to_write_a_string(
    data_only: World, tmp_path: Path
) -> None:
    document = data(test_cases={TEST_CASE: [version(1, created_by_user_id=1234)]})
    assert the_refusal(data_only, tmp_path, document) == (
        "/gradient/0/versions/0/created_by_user_id",
        "expected a whole number from 0 to 18446744073709551615, written as a string such as "
        '"1234", got 1234',
    )


def test_versions_out_of_order_are_refused(data_only: World, tmp_path: Path) -> None:
    document = data(test_cases={TEST_CASE: [version(3), version(2)]})
    assert the_refusal(data_only, tmp_path, document) == (
        "/gradient/0/versions/1/version",
        "expected a version number above 3 (versions are listed oldest first, from 1), got 2",
    )


def test_versions_with_a_number_missing_answer_each_as_written(
    data_only: World, tmp_path: Path
) -> None:
    path = write(tmp_path / "gaps.json", data(test_cases={TEST_CASE: [version(2), version(5)]}))
    world = data_only.with_data(load_data([path], data_only))
    assert world.evaluation_test_case_versions() == {TEST_CASE: (2, 5)}
    assert [world.evaluation_test_case(TEST_CASE, n) for n in (1, 3, 6)] == [None, None, None]
    assert world.evaluation_test_case(TEST_CASE, 2)["total_runs"] == 4  # type: ignore[index]
    assert world.evaluation_test_case(TEST_CASE, 5)["total_runs"] == 10  # type: ignore[index]
    assert world.evaluation_test_case(TEST_CASE, None)["version"] == 5  # type: ignore[index]


def test_a_version_without_its_number_is_refused(data_only: World, tmp_path: Path) -> None:
    unnumbered = version(1)
    del unnumbered["version"]
    assert the_refusal(data_only, tmp_path, data(test_cases={TEST_CASE: [unnumbered]})) == (
        "/gradient/0/versions/0/version",
        "expected a version number above 0 (versions are listed oldest first, from 1), got nothing",
    )


def test_a_version_of_another_test_case_is_refused(data_only: World, tmp_path: Path) -> None:
    other = "00000000-0000-4000-8000-000000000001"
    document = data(test_cases={TEST_CASE: [version(1, uuid=other)]})
    assert the_refusal(data_only, tmp_path, document) == (
        "/gradient/0/versions/0/test_case_uuid",
        f'expected this test case\'s uuid "{TEST_CASE}", got "{other}"',
    )


def test_a_test_case_twice_is_refused_in_any_letter_case(data_only: World, tmp_path: Path) -> None:
    document = data(test_cases={TEST_CASE: [version(1)]})
    document["gradient"].append({"test_case_uuid": TEST_CASE.upper(), "versions": [version(1)]})
    path = write(tmp_path / "twice.json", document)
    assert refusals(data_only, path) == [
        (
            "/gradient/1/test_case_uuid",
            f'test case "{TEST_CASE.upper()}" is already at {path}#/gradient/0; merge their '
            "versions into one",
        )
    ]


def test_a_generated_test_case_uuid_is_refused(world: World, tmp_path: Path) -> None:
    document = data(test_cases={EXAMPLE_TEST_CASE: [version(1, uuid=EXAMPLE_TEST_CASE)]})
    assert the_refusal(world, tmp_path, document) == (
        "/gradient/0/test_case_uuid",
        f'test case "{EXAMPLE_TEST_CASE}" is a generated one; give it another uuid, '
        "or serve an export with --data-only",
    )


# -- how problems are listed
# --------------------------------------------------------------------------------------------------
def test_every_problem_is_listed_with_its_file_and_line_in_yaml(
    data_only: World, tmp_path: Path
) -> None:
    bad = case("case-1", "2026-10-01T12:00:00Z", kind="robot", updatedAt="2026-10-01T12:00:01Z")
    path = write(
        tmp_path / "shop.yaml",
        data([(AGENT, PROJECT, [bad])], {TEST_CASE: [version(1), version(1)]}),
    )
    text = path.read_text(encoding="utf-8").splitlines()

    def line(words: str, after: int = 0) -> int:
        """The number of the first line from `after` on that holds `words`."""
        return next(n for n, held in enumerate(text, 1) if n > after and words in held)

    second = line("version: 1", line("version: 1"))
    with pytest.raises(DataFileError) as raised:
        load_data([path], data_only)
    lines = str(raised.value).splitlines()
    assert lines[0] == (
        f"{path}:{line('kind: robot')}: /testSet/0/cases/0/kind: expected one of "
        '"correction", "hand", got "robot"'
    )
    assert lines[1].startswith(
        f"{path}:{line('updatedAt:')}: /testSet/0/cases/0/updatedAt: an active case's updatedAt "
        "is its addedAt"
    )
    assert (
        lines[2] == f"{path}:{second}: /gradient/0/versions/1/version: expected a version number "
        "above 1 (versions are listed oldest first, from 1), got 1"
    )
    assert len(lines) == 3


def test_lines_are_found_in_json_too_even_indented_with_tabs(
    data_only: World, tmp_path: Path
) -> None:
    document = data([(AGENT, PROJECT, [case("case-1", "2026-10-01T12:00:00Z", runId=7)])])
    path = tmp_path / "tabs.json"
    path.write_text(json.dumps(document, indent="\t"), encoding="utf-8")
    with pytest.raises(DataFileError) as raised:
        load_data([path], data_only)
    (problem,) = raised.value.problems
    runid_line = path.read_text(encoding="utf-8").splitlines().index('\t\t\t\t\t"runId": 7,') + 1
    assert (
        str(problem)
        == f"{path}:{runid_line}: /testSet/0/cases/0/runId: expected text (a string), got 7"
    )


def test_nothing_of_a_half_valid_set_of_files_is_used(data_only: World, tmp_path: Path) -> None:
    good = write(tmp_path / "good.json", shop())
    bad = write(tmp_path / "bad.json", data([(AGENT, "not-a-uuid", [])]))
    problems = refusals(data_only, good, bad)
    assert problems == [
        (
            "/testSet/0/projectId",
            'expected a UUID such as "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", got "not-a-uuid"',
        )
    ]


def _seconds(text: str) -> int:
    from evalmock.world.timeline import parse_rfc3339

    return parse_rfc3339(text)


@pytest.mark.parametrize("doc", ["README.md", "docs/world.md"])
def test_the_data_files_the_documentation_shows_load(doc: str, tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8")
    blocks = [
        block
        for block in re.findall(r"```yaml\n(.*?)```", text, re.S)
        if block.startswith("testSet:")
    ]
    assert blocks, f"{doc} shows no data file"
    for number, block in enumerate(blocks):
        (tmp_path / f"shown-{number}.yaml").write_text(block, encoding="utf-8")
        for world in (World(cases=10), World(cases=1, generated=False)):
            assert load_data([tmp_path / f"shown-{number}.yaml"], world).case_count > 0
