"""`evalmock serve --churn N` over HTTP: cases arrive and retire as a list is requested, cursors
walk on across them, every body stays valid against the document, and the same requests give the
same bodies."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from evalmock.contract.documents import TEST_SET
from evalmock.defaults import CHURN_RETIRE_EVERY
from evalmock.server.banner import banner
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT

from .helpers import AUTH, MAX_PAGES, FrozenClock, assert_conforms, cases_path, example_params


def get(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get(cases_path(), params=example_params(**params), headers=AUTH)
    # the client validates its own responses: a body the document refuses would be a 500
    assert response.status_code == 200, response.text
    assert_conforms(TEST_SET, response)
    return response.json()


def walk(client: httpx.Client, limit: int, **params: Any) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    cursor: dict[str, str] = {}
    for _ in range(MAX_PAGES):
        page = get(client, limit=limit, **params, **cursor)
        cases += page["data"]
        if not page["hasMore"]:
            return cases
        cursor = {"cursor": page["nextCursor"]}
    raise AssertionError(f"no last page within {MAX_PAGES} pages")


def test_a_walk_across_arrivals_yields_each_case_once_newest_first(
    make_client: Callable[..., httpx.Client], server_world: World
) -> None:
    client = make_client(churn=1)  # a case on every request, a retirement on every third
    walked = walk(client, 25)
    ids = [case["id"] for case in walked]
    assert len(ids) == len(set(ids))
    assert all(a["addedAt"] > b["addedAt"] for a, b in itertools.pairwise(walked))
    # and none skipped: a case as old as the walk's first that it did not list was retired
    everything = walk(client, 100, include="retired")
    skipped = [
        case["id"]
        for case in everything
        if case["addedAt"] <= walked[0]["addedAt"]
        and case["id"] not in ids
        and "retired" not in case
    ]
    assert not skipped, f"the walk skipped {len(skipped)} active case(s): {skipped[:3]}"
    after = {case["id"] for case in walk(client, 100)}
    # the walk began with one arrival and then kept below it, whatever arrived above
    assert after - set(ids) and len(walked) > 1
    top = get(client, limit=1)["data"][0]
    assert top["addedAt"] > walked[0]["addedAt"]  # later arrivals are newer than the walk's first


def test_a_retired_case_comes_back_only_with_include_retired_with_the_page_s_shape(
    make_client: Callable[..., httpx.Client],
) -> None:
    client = make_client(churn=1)
    active_before = {case["id"] for case in get(client, limit=100)["data"]}
    for _ in range(CHURN_RETIRE_EVERY * 3):
        get(client, limit=1)
    active = walk(client, 100)
    assert not [case for case in active if "retired" in case]
    # after the active walk: what it did not list had been retired before it came there
    everything = {case["id"]: case for case in walk(client, 100, include="retired")}
    gone = active_before - {case["id"] for case in active}
    assert gone  # retired, among the newest active cases
    for case_id in gone:
        case = everything[case_id]
        assert case["updatedAt"] == case["retired"]["at"] > case["addedAt"]
        assert case["retired"]["by"]["kind"] in ("user", "service")


def test_the_same_seed_and_requests_give_the_same_bodies(
    make_client: Callable[..., httpx.Client],
) -> None:
    def bodies(client: httpx.Client) -> list[bytes]:
        found = []
        for number in range(12):
            params = example_params(limit=5, **({"include": "retired"} if number % 2 else {}))
            found.append(client.get(cases_path(), params=params, headers=AUTH).content)
        return found

    # cursors seal their issue time: both servers read one frozen clock
    first = bodies(make_client(churn=2, clock=FrozenClock()))
    assert first == bodies(make_client(churn=2, clock=FrozenClock()))
    assert first[0] != first[2]  # the second request brought a case: the list moved


def test_without_churn_the_list_stands_still(make_client: Callable[..., httpx.Client]) -> None:
    client = make_client()
    first = [get(client, limit=10)["data"] for _ in range(5)]
    assert all(page == first[0] for page in first)


def test_a_cursor_of_an_arrival_is_refused_for_another_caller_as_every_cursor_is(
    make_client: Callable[..., httpx.Client],
) -> None:
    client = make_client(churn=1)
    cursor = get(client, limit=1)["nextCursor"]  # after the arrival: a position above the world's
    response = client.get(
        cases_path(),
        params=example_params(limit=1, cursor=cursor),
        headers={"Authorization": "Bearer demo-other"},
    )
    assert response.status_code == 400
    assert get(client, limit=1, cursor=cursor)["data"]


@pytest.mark.parametrize("churn", [0, 7])
def test_the_banner_says_the_lists_move_and_the_targets_hold_the_counts_at_start(
    server_world: World, churn: int
) -> None:
    text = banner(ServerSettings(churn=churn, write_targets="t.toml"), server_world)
    said = "Lists move (--churn 7): a case arrives at the top of a list every 7 requests of it"
    assert (said in text) == bool(churn)
    assert ("Targets written to t.toml, with each list's counts at start" in text) == bool(churn)
    assert EXAMPLE_AGENT in text
