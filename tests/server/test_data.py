"""`evalmock serve --data FILE`: refused at start with every problem, served next to or instead of
the world, named in the banner and the targets file, and reloaded when the file changes."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from data_builders import AGENT, PROJECT, TEST_CASE, case, data, shop, version, write
from evalmock.cli import build_parser, main
from evalmock.contract.targets import dump_targets, load_targets
from evalmock.server.app import create_app
from evalmock.server.banner import banner
from evalmock.server.data_watcher import DataWatcher, files_state
from evalmock.server.live_world import LiveWorld, build_world
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE

from .helpers import AUTH, assert_envelope, cases_path, evaluation_path

RELOAD_TIMEOUT_S = (
    15.0  # a bound, not a measurement: the watcher usually answers within a tenth of a second
)


def settings_for(path: Path, data_only: bool = False, **more: Any) -> ServerSettings:
    return ServerSettings(
        cases=30, data_files=(str(path),), data_only=data_only, validate_responses=True, **more
    )


@contextlib.contextmanager
def client_for(settings: ServerSettings) -> Iterator[httpx.Client]:
    """An in-process server; entering it runs the lifespan, which watches the data files until
    exit."""
    with create_app(settings).test_client(raise_server_exceptions=False) as client:
        yield client


def shop_cases(client: httpx.Client, **params: Any) -> list[str]:
    response = client.get(
        cases_path(AGENT), params={"projectId": PROJECT, "limit": 100, **params}, headers=AUTH
    )
    assert response.status_code == 200, response.text
    return [c["id"] for c in response.json()["data"]]


def eventually(condition: Any, what: str) -> None:
    deadline = time.monotonic() + RELOAD_TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {RELOAD_TIMEOUT_S} s: {what}")
        time.sleep(0.05)


# -- at start
# --------------------------------------------------------------------------------------------------
def test_a_bad_data_file_is_refused_at_start_with_every_problem_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = shop()
    bad["testSet"][0]["cases"][0]["kind"] = "robot"
    bad["gradient"][0]["versions"][1]["version"] = 1
    path = write(tmp_path / "shop.json", bad)
    assert main(["serve", "--data", str(path), "--port", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    kind_line, version_line = _line(path, '"robot"'), _line(path, '"version": 1', 2)
    assert err == [
        "evalmock serve: the data files have 2 problems; nothing is served:",
        f'{path}:{kind_line}: /testSet/0/cases/0/kind: expected one of "correction", "hand", got '
        '"robot"',
        f"{path}:{version_line}: /gradient/0/versions/1/version: expected a version number above "
        "1 (versions are listed oldest first, from 1), got 1",
    ]


def test_data_only_needs_a_data_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["serve", "--data-only"])
    assert raised.value.code == 2
    assert "--data-only serves only the --data files" in capsys.readouterr().err


def test_data_flags_reach_the_settings_and_every_worker() -> None:
    args = build_parser().parse_args(
        ["serve", "--data", "a.yaml", "--data", "b.json", "--data-only"]
    )
    settings = ServerSettings.from_args(args)
    assert (settings.data_files, settings.data_only) == (("a.yaml", "b.json"), True)
    assert ServerSettings.from_env(settings.to_env()) == settings


# -- serving
# --------------------------------------------------------------------------------------------------
def test_user_data_is_served_next_to_the_generated_world(tmp_path: Path) -> None:
    mine = case("case-mine", "2026-11-20T09:00:00Z", project=EXAMPLE_PROJECT)
    document = shop()
    document["testSet"].append(
        {"agentId": EXAMPLE_AGENT, "projectId": EXAMPLE_PROJECT, "cases": [mine]}
    )
    with client_for(settings_for(write(tmp_path / "shop.yaml", document))) as client:
        assert shop_cases(client, include="retired") == [
            f"{'case' if n % 3 == 0 else 'corr'}-{n:03d}" for n in reversed(range(6))
        ]
        example = client.get(
            cases_path(), params={"projectId": EXAMPLE_PROJECT, "limit": 100}, headers=AUTH
        ).json()
        assert "case-mine" in [c["id"] for c in example["data"]]
        assert client.get(evaluation_path(TEST_CASE.upper()), headers=AUTH).json() == {
            "evaluation_test_case": version(2)
        }
        assert client.get(evaluation_path(), headers=AUTH).status_code == 200


def test_data_only_serves_nothing_but_the_user_data(tmp_path: Path) -> None:
    with client_for(settings_for(write(tmp_path / "shop.yaml", shop()), data_only=True)) as client:
        assert shop_cases(client) == ["corr-005", "corr-004", "case-003", "corr-002", "case-000"]
        missing = client.get(cases_path(), params={"projectId": EXAMPLE_PROJECT}, headers=AUTH)
        assert_envelope(missing, 404, "agent-not-found")
        assert client.get(evaluation_path(EXAMPLE_TEST_CASE), headers=AUTH).status_code == 404
        assert client.get(evaluation_path(TEST_CASE), headers=AUTH).status_code == 200


def test_a_served_test_case_carries_the_uuid_it_is_served_under_as_in_the_readme(
    tmp_path: Path,
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    shown = next(
        block
        for block in re.findall(r"```yaml\n(.*?)```", readme, re.S)
        if block.startswith("testSet:")
    )
    (tmp_path / "my-data.yaml").write_text(shown, encoding="utf-8")
    uuid = yaml.safe_load(shown)["gradient"][0]["test_case_uuid"]
    assert "test_case_uuid" not in yaml.safe_load(shown)["gradient"][0]["versions"][0]
    with client_for(settings_for(tmp_path / "my-data.yaml", data_only=True)) as client:
        served = client.get(evaluation_path(uuid.upper()), headers=AUTH).json()[
            "evaluation_test_case"
        ]
    assert served["test_case_uuid"] == uuid


def test_a_version_that_states_its_uuid_is_served_as_written(tmp_path: Path) -> None:
    path = write(
        tmp_path / "shop.json", data(test_cases={TEST_CASE: [version(1, uuid=TEST_CASE.upper())]})
    )
    with client_for(settings_for(path, data_only=True)) as client:
        served = client.get(evaluation_path(TEST_CASE), headers=AUTH).json()["evaluation_test_case"]
    assert served == version(1, uuid=TEST_CASE.upper())


def test_the_banner_names_the_user_data(tmp_path: Path) -> None:
    path = write(tmp_path / "shop.yaml", shop())
    merged = banner(ServerSettings(), build_world(settings_for(path)))
    assert (
        f"Your data ({path}), reloaded when a file changes: 1 agent, 1 project, 6 cases, 1 "
        "evaluation "
        "test case" in merged
    )
    assert (
        f"  {AGENT:<22} {PROJECT} (6 cases)" in merged and f"  {TEST_CASE}: versions 1, 2" in merged
    )
    assert (
        "acme.drafting" in merged
        and f"/agents/{AGENT}/test-set/cases?projectId={PROJECT}" in merged
    )
    alone = banner(ServerSettings(), build_world(settings_for(path, data_only=True)))
    assert alone.startswith(f"evalmock: only the data of {path}, 1 worker")
    assert "acme.drafting" not in alone and f"evaluation_test_cases/{TEST_CASE}'" in alone


def test_the_banner_of_an_empty_data_only_world_offers_no_curl(tmp_path: Path) -> None:
    text = banner(
        ServerSettings(),
        build_world(settings_for(write(tmp_path / "none.json", data()), data_only=True)),
    )
    assert "0 agents, 0 projects, 0 cases, 0 evaluation test cases" in text and "curl" not in text


def test_the_targets_name_the_user_projects_and_test_cases(tmp_path: Path) -> None:
    targets = targets_for(
        build_world(settings_for(write(tmp_path / "shop.yaml", shop()), data_only=True))
    )
    (project,) = targets.projects
    assert (project.agent_id, project.project_id, project.active_cases) == (AGENT, PROJECT, 5)
    assert (project.has_retired, project.has_hand, project.has_corrections) == (True, True, True)
    assert [(t.uuid, t.versions) for t in targets.test_cases] == [(TEST_CASE, (1, 2))]


# -- live reload
# --------------------------------------------------------------------------------------------------
def test_a_changed_file_is_served_without_a_restart_and_the_targets_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, targets = write(tmp_path / "shop.yaml", shop()), tmp_path / "targets.toml"
    settings = settings_for(path, data_only=True, write_targets=str(targets))
    # `evalmock serve` writes the file before it serves (runner.py); the app only rewrites it, so
    # the file is there from the start and every read below, during the rewrite too, must find it
    dump_targets(targets_for(build_world(settings)), targets)
    assert load_targets(targets).projects[0].active_cases == 5
    with client_for(settings) as client:
        cursor = client.get(
            cases_path(AGENT), params={"projectId": PROJECT, "limit": 1}, headers=AUTH
        ).json()["nextCursor"]
        document = shop()
        document["testSet"][0]["cases"].append(case("case-new", "2026-12-01T00:00:00Z"))
        write(path, document)
        eventually(lambda: shop_cases(client)[:1] == ["case-new"], "the new case is served")
        stale = client.get(
            cases_path(AGENT),
            params={"projectId": PROJECT, "limit": 1, "cursor": cursor},
            headers=AUTH,
        )
        error = assert_envelope(stale, 400, "bad-input")
        assert error["message"] == (
            "The data changed since the cursor was issued, so the list starts again: "
            "send the request without it."
        )
        eventually(
            lambda: load_targets(targets).projects[0].active_cases == 6, "the targets file names it"
        )
    assert (
        f"evalmock serve: reloaded {path}: 1 agent, 1 project, 7 cases, 1 evaluation test case; "
        "1 list changed: their cursors issued before now start the list again; other lists' "
        "cursors go on." in capsys.readouterr().err
    )


def test_a_save_in_place_caught_while_empty_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "shop.yaml", shop())
    document = shop()
    document["testSet"][0]["cases"].append(case("case-new", "2026-12-01T00:00:00Z"))
    text = write(tmp_path / "next.yaml", document).read_text(encoding="utf-8")
    with client_for(settings_for(path, data_only=True)) as client:
        with path.open(
            "w", encoding="utf-8"
        ) as saved:  # an editor that truncates, then writes a moment later
            saved.flush()
            time.sleep(0.3)  # longer than the watcher's quiet step, so it sees the empty file
            saved.write(text)
        eventually(lambda: shop_cases(client)[:1] == ["case-new"], "the new case is served")
    said = capsys.readouterr().err
    assert "refused" not in said and "empty" not in said
    assert f"evalmock serve: reloaded {path}: 1 agent, 1 project, 7 cases" in said


def test_a_changed_file_that_breaks_a_rule_is_refused_and_the_old_data_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "shop.yaml", shop())
    console: list[str] = []
    with client_for(settings_for(path, data_only=True)) as client:
        before = shop_cases(client)
        broken = shop()
        broken["testSet"][0]["cases"][2]["id"] = broken["testSet"][0]["cases"][0]["id"]
        broken["testSet"][0]["cases"][2]["kind"] = "robot"
        write(path, broken)

        def refused() -> bool:
            console.append(capsys.readouterr().err)
            return "refused the changed data" in "".join(console)

        eventually(refused, "the refusal is on the console")
        assert shop_cases(client) == before
    said = "".join(console).splitlines()
    start = said.index(
        "evalmock serve: refused the changed data, 2 problems; still serving the previous data:"
    )
    taken = broken["testSet"][0]["cases"][0]["id"]
    assert said[start + 1 : start + 3] == [
        f"{path}:{_line(path, '- id:', 3)}: /testSet/0/cases/2/id: id "
        f'"{taken}" is already in this list, at {path}#/testSet/0/cases/0; give one of them '
        "another id",
        f"{path}:{_line(path, 'kind: robot')}: /testSet/0/cases/2/kind: expected one of "
        '"correction", "hand", got "robot"',
    ]


WATCH_BEGINS_S = 15.0  # a bound on the watcher thread's first pass, not a measurement


def test_a_change_saved_before_the_watch_began_is_served_once_it_begins(tmp_path: Path) -> None:
    """A slow start: the file changes after the world read it and before the watcher watches. No
    event will bring that change; the files' state, taken before the read, does."""
    path = write(tmp_path / "shop.yaml", shop(3))
    read = files_state((str(path),))
    live = LiveWorld(build_world(settings_for(path, data_only=True)), (str(path),))
    served = live.world
    write(path, shop(5))  # saved before the watch begins
    watcher = DataWatcher(live, read=read)
    watcher.start()
    try:
        deadline = time.monotonic() + WATCH_BEGINS_S
        while live.world is served and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        watcher.stop()
    assert live.world is not served


def test_one_refusal_is_said_once_however_many_changes_bring_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "shop.yaml", shop())
    watcher = DataWatcher(LiveWorld(build_world(settings_for(path, data_only=True)), (str(path),)))
    broken = shop()
    broken["testSet"][0]["cases"][2]["addedAt"] = broken["testSet"][0]["cases"][0]["addedAt"]
    write(path, broken)
    watcher.reload()
    watcher.reload()  # the same file again: a second change of one save
    assert capsys.readouterr().err.count("refused the changed data") == 1
    write(path, shop())
    watcher.reload()  # back to what is served: nothing to say
    write(path, broken)
    watcher.reload()  # broken again: said again
    assert capsys.readouterr().err.count("refused the changed data") == 1


def _line(path: Path, text: str, occurrence: int = 1) -> int:
    """The 1-based line of the `occurrence`-th line holding `text`."""
    found = [
        number
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if text in line
    ]
    return found[occurrence - 1]


def test_the_banner_names_recorded_versions_by_their_numbers(tmp_path: Path) -> None:
    path = write(tmp_path / "seen.json", data(test_cases={TEST_CASE: [version(2), version(5)]}))
    shown = banner(ServerSettings(), build_world(settings_for(path, data_only=True)))
    assert f"  {TEST_CASE}: versions 2, 5" in shown
