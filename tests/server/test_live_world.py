"""Reloading the served world: a valid file swaps it whole, an invalid one is refused, the cursors
of a list the swap changed do not cross it, those of every other list do."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from data_builders import AGENT, PROJECT, TEST_CASE, case, data, shop, version, write
from evalmock.paths import CACHE_ENV, cache_dir, fixtures_dir
from evalmock.server.cursors import CursorSealer
from evalmock.server.errors import ApiError
from evalmock.server.handlers.evaluation_test_cases import EvaluationTestCases
from evalmock.server.handlers.test_set import DATA_CHANGED, TestSetCases
from evalmock.server.live_world import LiveWorld, build_world
from evalmock.server.settings import ServerSettings
from evalmock.world import curated
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.curated import FixtureError
from evalmock.world.data_files import DataFileError
from evalmock.world.start_cache import verdict_file

from .helpers import FrozenClock

CALLER = {"sub": "user-demo"}


def live_from(path: Path, data_only: bool = True) -> LiveWorld:
    settings = ServerSettings(cases=5, data_files=(str(path),), data_only=data_only)
    return LiveWorld(build_world(settings), settings.data_files)


def page(
    handler: TestSetCases, agent: str = AGENT, project: str = PROJECT, **params: Any
) -> dict[str, Any]:
    response = asyncio.run(
        handler.list_cases(agent_id=agent, project_id=project, token_info=CALLER, **params)
    )
    return json.loads(response.body)


def refusal(handler: TestSetCases, **params: Any) -> ApiError:
    with pytest.raises(ApiError) as raised:
        page(handler, **params)
    return raised.value


@pytest.fixture
def shop_file(tmp_path: Path) -> Path:
    return write(tmp_path / "shop.yaml", shop())


@pytest.fixture
def handler_of(shop_file: Path) -> tuple[LiveWorld, TestSetCases]:
    live = live_from(shop_file)
    return live, TestSetCases(live, CursorSealer(b"key", clock=FrozenClock()))


def test_a_valid_change_is_served_after_a_reload(
    shop_file: Path, handler_of: tuple[LiveWorld, TestSetCases]
) -> None:
    live, handler = handler_of
    document = shop()
    document["testSet"][0]["cases"].append(case("case-new", "2026-12-01T00:00:00Z"))
    document["gradient"][0]["versions"].append(version(3))
    write(shop_file, document)
    assert live.reload() is True
    assert page(handler, limit=1)["data"][0]["id"] == "case-new"
    found = asyncio.run(EvaluationTestCases(live).get(TEST_CASE))
    assert json.loads(found.body)["evaluation_test_case"]["version"] == 3


def test_a_cursor_issued_before_a_swap_is_bad_input_saying_the_data_changed(
    shop_file: Path, handler_of: tuple[LiveWorld, TestSetCases]
) -> None:
    live, handler = handler_of
    cursor = page(handler, limit=1)["nextCursor"]
    assert page(handler, limit=1, cursor=cursor)["data"]  # valid before the swap
    write(shop_file, shop(5))
    assert live.reload() is True
    error = refusal(handler, limit=1, cursor=cursor)
    assert (error.status, error.code, error.message, error.details) == (
        400,
        "bad-input",
        DATA_CHANGED,
        {"parameter": "cursor"},
    )
    fresh = page(handler, limit=1)["nextCursor"]
    assert page(handler, limit=1, cursor=fresh)["data"]


OTHER_PROJECT = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"


def two_lists(first: int, second: int) -> dict[str, Any]:
    """A file of two lists of one agent: `first` cases in PROJECT, `second` in OTHER_PROJECT."""
    return data(
        [
            (
                AGENT,
                PROJECT,
                [case(f"case-a{n}", f"2026-10-{n + 1:02d}T00:00:00Z") for n in range(first)],
            ),
            (
                AGENT,
                OTHER_PROJECT,
                [
                    case(f"case-b{n}", f"2026-10-{n + 1:02d}T00:00:00Z", project=OTHER_PROJECT)
                    for n in range(second)
                ],
            ),
        ]
    )


def test_a_reload_that_changes_one_list_leaves_the_walks_of_the_others_going(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "two.json", two_lists(4, 4))
    live = live_from(path, data_only=False)
    handler = TestSetCases(live, CursorSealer(b"key", clock=FrozenClock()))
    changed = page(handler, limit=1)
    other = page(handler, project=OTHER_PROJECT, limit=1)
    generated = page(handler, agent=EXAMPLE_AGENT, project=EXAMPLE_PROJECT, limit=1)
    write(path, two_lists(5, 4))  # a case more in PROJECT's list only
    assert live.reload() is True
    # every other list's walk goes on where it was, to its end, each case once
    walked = [case["id"] for case in other["data"]]
    cursor = other["nextCursor"]
    while cursor:
        following = page(handler, project=OTHER_PROJECT, limit=1, cursor=cursor)
        walked += [case["id"] for case in following["data"]]
        cursor = following.get("nextCursor")
    assert walked == [f"case-b{n}" for n in reversed(range(4))]
    following = page(
        handler,
        agent=EXAMPLE_AGENT,
        project=EXAMPLE_PROJECT,
        limit=1,
        cursor=generated["nextCursor"],
    )
    assert following["data"] and following["data"] != generated["data"]
    # the changed list's cursors are refused as before: it starts again
    error = refusal(handler, limit=1, cursor=changed["nextCursor"])
    assert (error.status, error.code, error.message) == (400, "bad-input", DATA_CHANGED)
    assert page(handler, limit=1)["data"][0]["id"] == "case-a4"


def test_under_churn_a_reload_keeps_the_other_lists_moving_and_their_cursors_open(
    tmp_path: Path,
) -> None:
    """A cursor of a list the reload left alone, issued after cases arrived at its top, still opens
    after the reload: the list goes on moving as it was, not started still again."""
    path = write(tmp_path / "two.json", two_lists(4, 4))
    live = live_from(path, data_only=False)
    handler = TestSetCases(live, CursorSealer(b"key", clock=FrozenClock()), churn=1)
    walk = dict(agent=EXAMPLE_AGENT, project=EXAMPLE_PROJECT, limit=2)
    for _ in range(3):  # three arrivals at the top of the generated list
        first = page(handler, **walk)
    write(path, two_lists(5, 4))  # PROJECT's list only
    assert live.reload() is True
    following = page(handler, **walk, cursor=first["nextCursor"])
    ids = [case["id"] for case in first["data"] + following["data"]]
    assert len(following["data"]) == 2 and len(set(ids)) == 4


def test_a_list_changed_back_takes_its_earlier_cursors_again(tmp_path: Path) -> None:
    path = write(tmp_path / "two.json", two_lists(4, 4))
    live = live_from(path)
    handler = TestSetCases(live, CursorSealer(b"key", clock=FrozenClock()))
    cursor = page(handler, limit=1)["nextCursor"]
    write(path, two_lists(5, 4))
    assert live.reload() is True
    write(path, two_lists(4, 2))  # PROJECT's list as it was, OTHER_PROJECT's changed
    assert live.reload() is True
    assert [c["id"] for c in page(handler, limit=1, cursor=cursor)["data"]] == ["case-a2"]


def test_an_invalid_change_is_refused_and_the_previous_data_served(
    shop_file: Path, handler_of: tuple[LiveWorld, TestSetCases]
) -> None:
    live, handler = handler_of
    before = live.world
    cursor = page(handler, limit=1)["nextCursor"]
    write(shop_file, data([(AGENT, "not-a-uuid", [])]))
    with pytest.raises(DataFileError) as raised:
        live.reload()
    assert [(p.pointer, p.message) for p in raised.value.problems] == [
        (
            "/testSet/0/projectId",
            'expected a UUID such as "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", got "not-a-uuid"',
        )
    ]
    assert live.world is before
    assert page(handler, limit=1, cursor=cursor)["data"]  # its cursors still work


def test_saving_the_same_content_again_keeps_the_world_and_its_cursors(
    shop_file: Path, handler_of: tuple[LiveWorld, TestSetCases]
) -> None:
    live, handler = handler_of
    before = live.world
    cursor = page(handler, limit=1)["nextCursor"]
    write(shop_file, shop())
    assert live.reload() is False and live.world is before
    assert page(handler, limit=1, cursor=cursor)["data"]


def test_a_request_in_flight_finishes_on_the_world_it_started_with(
    shop_file: Path, handler_of: tuple[LiveWorld, TestSetCases], monkeypatch: pytest.MonkeyPatch
) -> None:
    live, handler = handler_of
    old = live.world
    write(shop_file, data([(AGENT, PROJECT, [case("case-only", "2026-12-01T00:00:00Z")])]))
    original = old.encoded_page

    def page_during_a_reload(*args: Any) -> Any:
        assert live.reload() is True  # the swap happens while this request is being answered
        # the new world was copied from the old one, this patch included
        del live.world.encoded_page
        return original(*args)

    monkeypatch.setattr(old, "encoded_page", page_during_a_reload)
    answered = page(handler, limit=100, include="retired")
    assert [c["id"] for c in answered["data"]] == [
        c["id"]
        for c in sorted(shop()["testSet"][0]["cases"], key=lambda c: c["addedAt"], reverse=True)
    ]
    assert live.world is not old
    assert [c["id"] for c in page(handler, limit=100)["data"]] == ["case-only"]


def test_a_change_to_the_generated_world_s_data_keeps_the_generated_cases(tmp_path: Path) -> None:
    path = write(tmp_path / "shop.json", shop())
    live = live_from(path, data_only=False)
    generated = live.world.agent_ids()[:-1]
    write(path, data())
    assert live.reload() is True
    assert live.world.agent_ids() == generated


def test_a_reload_checks_a_case_whose_json_changed_even_if_python_sees_it_equal(
    tmp_path: Path,
) -> None:
    ranked = case(
        "corr-1",
        "2026-10-01T12:00:00Z",
        expect={"items": [{"key": "k", "rank": 0, "verdict": "right"}]},
    )
    path = write(tmp_path / "ranked.json", data([(AGENT, PROJECT, [ranked])]))
    live = live_from(path)
    ranked["expect"]["items"][0]["rank"] = (
        0.0  # == 0 in Python, a number but not an integer in JSON Schema
    )
    write(path, data([(AGENT, PROJECT, [ranked])]))
    with pytest.raises(DataFileError) as raised:
        live.reload()
    assert [(p.pointer, p.message) for p in raised.value.problems] == [
        ("/testSet/0/cases/0/expect/items/0/rank", "expected a whole number, got 0.0")
    ]


@pytest.fixture
def kept_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped fixtures served from their own folder, with a start cache of their
    own."""
    copy = tmp_path / "fixtures"
    shutil.copytree(fixtures_dir(), copy)
    monkeypatch.setenv("EVALMOCK_FIXTURES_DIR", str(copy))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return copy


def rules_never_applied(case: dict[str, Any]) -> list[str]:
    raise AssertionError(f"the rules were applied again to {case['id']}")


def test_fixtures_that_passed_every_rule_are_not_checked_again_at_the_next_start(
    kept_fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build_world(ServerSettings(cases=5))
    monkeypatch.setattr(curated, "case_problems", rules_never_applied)
    again = build_world(ServerSettings(cases=5))
    assert [c.case for c in again.curated] == [c.case for c in first.curated] and again.curated


def test_fixtures_changed_after_passing_are_checked_again_and_refused(
    kept_fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_world(ServerSettings(cases=5))
    path = kept_fixtures / "edge-cases.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cases"][0]["case"]["expert"] = False  # a hand case is always an expert's
    path.write_text(json.dumps(document), encoding="utf-8")
    for _ in range(2):  # a refusal is never kept: every start says it
        with pytest.raises(FixtureError, match="expert"):
            build_world(ServerSettings(cases=5))


def test_a_pass_is_kept_for_the_seed_that_placed_the_fixtures(kept_fixtures: Path) -> None:
    build_world(ServerSettings(seed=1, cases=5))
    folder = cache_dir()
    assert folder is not None
    assert (
        verdict_file(folder, kept_fixtures, 1).is_file()
        and not verdict_file(folder, kept_fixtures, 2).is_file()
    )
