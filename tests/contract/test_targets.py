"""Targets files: the shipped example matches the default world, files round-trip, bad shapes are
refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalmock.contract.targets import (
    ProjectTarget,
    Targets,
    TargetsError,
    TestCaseTarget,
    dump_targets,
    load_targets,
    targets_from_dict,
)
from evalmock.paths import fixtures_dir
from evalmock.server.targets_file import targets_for
from evalmock.world import World
from evalmock.world.timeline import WORLD_NOW, parse_rfc3339
from evalmock.world.world import CaseQuery


def test_the_example_targets_match_the_default_world() -> None:
    targets = load_targets(fixtures_dir() / "targets.example.toml")
    world = World()
    assert (
        targets.token == "demo-user"
        and targets.second_token == "demo-other"
        and targets.sealed_cursors
    )
    assert (targets.expired_token, targets.revoked_token) == ("demo-expired", "demo-revoked")
    # the mock's valid token without read on any project
    assert targets.no_read_token == "demo-no-read"
    facts = {(f.agent_id, f.project_id): f for f in world.project_facts()}
    assert {(p.agent_id, p.project_id) for p in targets.projects} == set(facts)
    for project in targets.projects:
        fact = facts[(project.agent_id, project.project_id)]
        assert (
            project.has_retired,
            project.has_hand,
            project.has_corrections,
            project.active_cases,
        ) == (fact.has_retired, fact.has_hand, fact.has_corrections, fact.active_cases)
        assert project.active_cases_at == datetime.fromtimestamp(fact.counted_at or 0, UTC)
    assert {t.uuid: t.versions for t in targets.test_cases} == world.evaluation_test_case_versions()
    assert any(
        p.agent_id == "example" and p.project_id == "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
        for p in targets.projects
    )


def test_written_targets_say_when_each_count_holds_after_every_date_of_the_world() -> None:
    # `serve --write-targets`: the world's "now", a day after its newest generated case; no case is
    # added or retired later, so every case's dates agree with the count at that moment
    world = World(cases=120)
    targets = targets_for(world)
    for project in targets.projects:
        assert project.active_cases_at == datetime.fromtimestamp(WORLD_NOW, UTC)
        query = CaseQuery(project.agent_id, project.project_id, include_retired=True)
        for case in world.iter_cases(query):
            for moment in (
                case["addedAt"],
                case["updatedAt"],
                (case.get("retired") or {}).get("at"),
            ):
                assert moment is None or parse_rfc3339(moment) <= WORLD_NOW


@pytest.mark.parametrize("suffix", [".toml", ".yaml"])
def test_targets_round_trip(tmp_path: Path, suffix: str) -> None:
    targets = Targets(
        projects=(
            ProjectTarget(
                "acme.drafting",
                "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0",
                has_retired=True,
                active_cases=30,
            ),
        ),
        test_cases=(TestCaseTarget("123e4567-e89b-12d3-a456-426614174000", (1, 2)),),
        token="t",
        second_token="u",
        expired_token="x",
        revoked_token="r",
        sealed_cursors=True,
        base_url="http://127.0.0.1:43210",
    )
    path = tmp_path / f"targets{suffix}"
    dump_targets(targets, path)
    assert load_targets(path) == targets


def test_a_targets_file_written_again_is_replaced_whole(tmp_path: Path) -> None:
    # `serve --write-targets` rewrites it after every reload, maybe while a harness is reading the
    # last one.
    path, copy = tmp_path / "targets.toml", tmp_path / "copy.toml"
    first = Targets(projects=(ProjectTarget("a", "p"),), test_cases=(), token="t")
    dump_targets(first, path)
    dump_targets(first, copy)
    with path.open(encoding="utf-8") as reader:
        dump_targets(Targets(projects=(ProjectTarget("b", "q"),), test_cases=(), token="t"), path)
        assert reader.read() == copy.read_text(encoding="utf-8")  # not emptied under the reader
    assert load_targets(path).projects == (ProjectTarget("b", "q"),)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"test_set": {"sealed_cursors": "yes"}}, "sealed_cursors"),
        (
            {
                "test_set": {
                    "projects": [{"agent_id": "a", "project_id": "p", "active_cases": True}]
                }
            },
            "active_cases",
        ),
        ({"gradient": {"test_cases": [{"uuid": "u", "versions": ["1"]}]}}, "versions"),
        ({"auth": {"token": 42}}, "auth.token"),
        ({"base_url": 8080}, "base_url must be a string"),
        ({"auth": {"tokne": "t"}}, "\\[auth\\]: unknown key tokne; did you mean token\\?"),
        ({"test_set": {"projects": [{"agent_id": "a"}]}}, "projects\\[0\\]: missing project_id"),
    ],
)
def test_targets_of_the_wrong_shape_are_refused(raw: dict, words: str) -> None:
    with pytest.raises(TargetsError, match=words):
        targets_from_dict(raw)


@pytest.mark.parametrize(
    ("text", "where", "key", "meant"),
    [
        (
            '[[test_set.projects]]\nagent_id = "a"\nprojectid = "p"\n',
            "test_set.projects[0]",
            "projectid",
            "project_id",
        ),
        (
            '[[test_set.projects]]\nagent_id = "a"\nproject_id = "p"\nhas_retierd = true\n',
            "test_set.projects[0]",
            "has_retierd",
            "has_retired",
        ),
        (
            '[[gradient.test_cases]]\nuuid = "u"\nversion = [1]\n',
            "gradient.test_cases[0]",
            "version",
            "versions",
        ),
        ("[test_set]\nsealed_cursor = true\n", "[test_set]", "sealed_cursor", "sealed_cursors"),
        ("[gradient]\ntestcases = []\n", "[gradient]", "testcases", "test_cases"),
        ("[test-set]\nsealed_cursors = true\n", "the top level", "test-set", "test_set"),
        ('[auth]\nsecond-token = "t"\n', "[auth]", "second-token", "second_token"),
    ],
    ids=[
        "project-key",
        "project-fact",
        "test-case-key",
        "test-set-key",
        "gradient-key",
        "table",
        "auth-key",
    ],
)
def test_a_misspelled_key_names_the_file_the_key_and_what_it_meant(
    tmp_path: Path, text: str, where: str, key: str, meant: str
) -> None:
    path = tmp_path / "targets.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TargetsError) as raised:
        load_targets(path)
    assert str(raised.value) == f"{path}: {where}: unknown key {key}; did you mean {meant}?"


def test_a_key_like_none_lists_the_keys_of_its_table(tmp_path: Path) -> None:
    path = tmp_path / "targets.toml"
    path.write_text(
        '[[test_set.projects]]\nagent_id = "a"\nproject_id = "p"\ncolour = "red"\n',
        encoding="utf-8",
    )
    with pytest.raises(TargetsError) as raised:
        load_targets(path)
    assert str(raised.value) == (
        f"{path}: test_set.projects[0]: unknown key colour; remove it, or write one of "
        "agent_id, project_id, has_retired, has_hand, has_corrections, active_cases, "
        "active_cases_at"
    )


@pytest.mark.parametrize(
    ("suffix", "written"),
    [
        (".toml", "active_cases_at = 2026-11-21T10:00:00+01:00"),  # a TOML date-time
        (".toml", 'active_cases_at = "2026-11-21T09:00:00Z"'),
        (".yaml", "active_cases_at: 2026-11-21T09:00:00Z"),  # a YAML timestamp
        (".json", '"active_cases_at": "2026-11-21T09:00:00Z"'),
    ],
)
def test_the_moment_of_a_count_is_read_as_one_instant_in_utc(
    tmp_path: Path, suffix: str, written: str
) -> None:
    path = tmp_path / f"targets{suffix}"
    if suffix == ".toml":
        text = f'[[test_set.projects]]\nagent_id = "a"\nproject_id = "p"\n{written}\n'
    elif suffix == ".yaml":
        text = f"test_set:\n  projects:\n    - agent_id: a\n      project_id: p\n      {written}\n"
    else:
        project = f'{{"agent_id": "a", "project_id": "p", {written}}}'
        text = f'{{"test_set": {{"projects": [{project}]}}}}'
    path.write_text(text, encoding="utf-8")
    [project] = load_targets(path).projects
    assert project.active_cases_at == datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
    dump_targets(load_targets(path), path)  # written back as it reads again
    assert load_targets(path).projects[0].active_cases_at == project.active_cases_at


@pytest.mark.parametrize("value", ['"yesterday"', "2026-11-21T09:00:00", '"2026-11-21"', "12"])
def test_a_moment_without_its_offset_is_refused(tmp_path: Path, value: str) -> None:
    path = tmp_path / "targets.toml"
    path.write_text(
        f'[[test_set.projects]]\nagent_id = "a"\nproject_id = "p"\nactive_cases_at = {value}\n',
        encoding="utf-8",
    )
    with pytest.raises(TargetsError) as raised:
        load_targets(path)
    assert "test_set.projects[0].active_cases_at must be a date-time with its offset" in str(
        raised.value
    )


def test_every_problem_of_a_targets_file_is_told_at_once(tmp_path: Path) -> None:
    """As with data files: a file with several mistakes names each, one a line, not the first
    alone."""
    path = tmp_path / "targets.toml"
    path.write_text(
        '[test_set]\nsealed_cursor = true\n[[test_set.projects]]\nagent_id = "a"\nproject_id = '
        '"p"\n'
        'active_cases = "12"\n[[gradient.test_cases]]\nuuid = 5\n[auth]\ntokn = "x"\n',
        encoding="utf-8",
    )
    with pytest.raises(TargetsError) as raised:
        load_targets(path)
    assert str(raised.value).splitlines() == [
        f"{path}: [auth]: unknown key tokn; did you mean token?",
        f"{path}: [test_set]: unknown key sealed_cursor; did you mean sealed_cursors?",
        f"{path}: test_set.projects[0].active_cases must be a whole number, got '12'",
        f"{path}: gradient.test_cases[0].uuid must be a string, got 5",
    ]


def test_no_read_token_is_read_and_written(tmp_path: Path) -> None:
    targets = targets_from_dict({"auth": {"token": "t", "no_read_token": "reads-nothing"}})
    assert targets.no_read_token == "reads-nothing"
    dump_targets(targets, tmp_path / "t.toml")
    assert load_targets(tmp_path / "t.toml").no_read_token == "reads-nothing"
    with pytest.raises(TargetsError, match="no_read_token must be a string"):
        targets_from_dict({"auth": {"no_read_token": 7}})
