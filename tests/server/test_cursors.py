"""Sealed cursors: only the list, filters and caller they were issued for, within a day,
untampered."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from evalmock.contract.operations import operation
from evalmock.server.cursors import TTL_SECONDS, Binding, CursorError, CursorSealer, DataChanged
from evalmock.server.handlers.test_set import BOUND
from evalmock.server.settings import default_cursor_key
from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from shared import SERVER_SEED

from .helpers import AUTH, OTHER, FrozenClock, assert_envelope, cases_path, example_params

KEY = b"test key"
PROJECT = "a60767bc-f81b-4009-86cc-372b632c4c53"
BOTH_KINDS = ("correction", "hand")
BINDING = Binding("acme.drafting", (PROJECT, False, BOTH_KINDS), "u-1")


def sealer(clock: Callable[[], float] | None = None, key: bytes = KEY) -> CursorSealer:
    return CursorSealer(key, clock=clock or FrozenClock())


def flip(cursor: str, index: int) -> str:
    """The cursor with one bit of its decoded bytes flipped."""
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[index] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


def test_a_sealed_position_opens_again() -> None:
    assert sealer().open(sealer().seal(1234, BINDING), BINDING) == 1234


def test_binding_ignores_project_case_and_kind_order() -> None:
    asked = CaseQuery.asked("acme.drafting", PROJECT.upper(), {"kind": "hand,correction"})
    same = CaseQuery.asked("acme.drafting", PROJECT, {"kind": "correction,hand"})
    assert asked.bound(BOUND) == same.bound(BOUND)
    assert asked.bound(("projectId", "include", "kind")) == (PROJECT, False, BOTH_KINDS)
    sealed = sealer().seal(7, Binding("acme.drafting", asked.bound(BOUND), "u-1"))
    assert sealer().open(sealed, Binding("acme.drafting", same.bound(BOUND), "u-1")) == 7


def test_the_binding_is_the_parameters_the_document_says_a_cursor_binds() -> None:
    assert operation("test-set").query_marked("cursor-binds") == BOUND
    assert BOUND[0] == "projectId" and {"include", "kind"} <= set(BOUND)


@pytest.mark.parametrize("index", [0, 5, 12, 20, 40])
def test_a_tampered_cursor_is_refused(index: int) -> None:
    with pytest.raises(CursorError, match="tampered"):
        sealer().open(flip(sealer().seal(7, BINDING), index), BINDING)


def test_a_cursor_sealed_with_another_key_is_refused() -> None:
    forged = sealer(key=b"another key").seal(7, BINDING)
    with pytest.raises(CursorError):
        sealer().open(forged, BINDING)


@pytest.mark.parametrize(
    "other",
    [
        Binding("globex.search", (PROJECT, False, BOTH_KINDS), "u-1"),
        Binding(
            "acme.drafting", ("9611adda-b293-4ed5-8f5c-0eee9be6ad46", False, BOTH_KINDS), "u-1"
        ),
        Binding("acme.drafting", (PROJECT, True, BOTH_KINDS), "u-1"),
        Binding("acme.drafting", (PROJECT, False, ("hand",)), "u-1"),
        Binding("acme.drafting", (PROJECT, False, BOTH_KINDS), "u-2"),
    ],
    ids=["agent", "project", "include", "kind", "caller"],
)
def test_a_cursor_for_another_list_filter_or_caller_is_refused(other: Binding) -> None:
    with pytest.raises(CursorError):
        sealer().open(sealer().seal(7, BINDING), other)


def test_a_cursor_of_other_data_is_refused_as_data_changed() -> None:
    before = dataclasses.replace(BINDING, list_generation=1)
    after = dataclasses.replace(BINDING, list_generation=2)
    cursor = sealer().seal(7, before)
    assert sealer().open(cursor, before) == 7
    with pytest.raises(DataChanged, match="the list's data changed"):
        sealer().open(cursor, after)
    # the generation is under the MAC: editing it is tampering
    with pytest.raises(CursorError, match="tampered"):
        sealer().open(flip(cursor, 24), after)


def test_a_cursor_is_valid_for_a_day_and_no_longer() -> None:
    clock = FrozenClock()
    cursor = sealer(clock).seal(7, BINDING)
    clock.advance(TTL_SECONDS)
    assert sealer(clock).open(cursor, BINDING) == 7
    clock.advance(1)
    with pytest.raises(CursorError, match="expired"):
        sealer(clock).open(cursor, BINDING)


def test_a_cursor_issued_in_the_future_is_refused() -> None:
    clock = FrozenClock()
    clock.advance(3600)
    cursor = sealer(clock).seal(7, BINDING)
    with pytest.raises(CursorError, match="future"):
        sealer(FrozenClock()).open(cursor, BINDING)


@pytest.mark.parametrize("garbage", ["", "x", "A" * 10_000, "é" * 66, "!" * 66, "=" * 66])
def test_garbage_is_refused_with_a_cursor_error(garbage: str) -> None:
    with pytest.raises(CursorError):
        sealer().open(garbage, BINDING)


def test_truncated_cursor_is_refused() -> None:
    with pytest.raises(CursorError):
        sealer().open(sealer().seal(7, BINDING)[:-3], BINDING)


# -- over HTTP
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture(scope="module")
def frozen_client(make_client: Callable[..., httpx.Client], clock: FrozenClock) -> httpx.Client:
    return make_client(clock=clock)


def first_cursor(client: httpx.Client, headers: dict[str, str] = AUTH, **params: Any) -> str:
    response = client.get(cases_path(), params=example_params(limit=2, **params), headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["nextCursor"]


def next_page(
    client: httpx.Client, cursor: str, headers: dict[str, str] = AUTH, **params: Any
) -> httpx.Response:
    return client.get(cases_path(), params=example_params(cursor=cursor, **params), headers=headers)


def assert_bad_cursor(response: httpx.Response) -> None:
    error = assert_envelope(response, 400, "bad-input")
    assert error["details"]["parameter"] == "cursor"
    assert "start again without it" in error["message"]


def test_cursor_survives_a_change_of_limit(frozen_client: httpx.Client) -> None:
    cursor = first_cursor(frozen_client)
    assert next_page(frozen_client, cursor, limit=7).status_code == 200


def test_cursor_accepts_the_same_filters_spelled_differently(frozen_client: httpx.Client) -> None:
    cursor = first_cursor(frozen_client, kind="hand,correction")
    lower = next_page(
        frozen_client, cursor, projectId=EXAMPLE_PROJECT.lower(), kind="correction,hand"
    )
    assert lower.status_code == 200
    assert next_page(frozen_client, cursor).status_code == 200  # no kind means both kinds


@pytest.mark.parametrize(
    "changes",
    [
        {"include": "retired"},
        {"kind": "hand"},
        {"projectId": "9611adda-b293-4ed5-8f5c-0eee9be6ad46"},
    ],
    ids=["include", "kind", "project"],
)
def test_cursor_for_other_filters_is_400(
    frozen_client: httpx.Client, changes: dict[str, str]
) -> None:
    assert_bad_cursor(next_page(frozen_client, first_cursor(frozen_client), **changes))


def test_cursor_for_another_agent_is_400(frozen_client: httpx.Client, server_world: Any) -> None:
    cursor = first_cursor(frozen_client)
    other_agent = next(a for a in server_world.agent_ids() if a != EXAMPLE_AGENT)
    project = server_world.project_ids(other_agent)[0]
    response = frozen_client.get(
        cases_path(other_agent), params={"projectId": project, "cursor": cursor}, headers=AUTH
    )
    assert_bad_cursor(response)


def test_cursor_of_another_caller_is_400(frozen_client: httpx.Client) -> None:
    assert_bad_cursor(next_page(frozen_client, first_cursor(frozen_client), headers=OTHER))


def test_cursor_of_a_tampered_byte_is_400(frozen_client: httpx.Client) -> None:
    assert_bad_cursor(next_page(frozen_client, flip(first_cursor(frozen_client), 3)))


def test_cursor_forged_with_another_key_is_400(
    frozen_client: httpx.Client, clock: FrozenClock
) -> None:
    binding = Binding(EXAMPLE_AGENT, (EXAMPLE_PROJECT.lower(), False, BOTH_KINDS), "user-demo")
    forged = CursorSealer(b"guessed key", clock=clock).seal(2, binding)
    assert_bad_cursor(next_page(frozen_client, forged))


def test_expired_cursor_is_400(frozen_client: httpx.Client, clock: FrozenClock) -> None:
    cursor = first_cursor(frozen_client)
    clock.advance(TTL_SECONDS + 1)
    try:
        response = next_page(frozen_client, cursor)
    finally:
        clock.advance(-(TTL_SECONDS + 1))
    assert_bad_cursor(response)
    assert "expired" in response.json()["error"]["message"]


def test_signed_cursor_for_a_position_the_list_lacks_is_400(
    frozen_client: httpx.Client, clock: FrozenClock, server_world: World
) -> None:
    # Signed with the server's own key (by default derived from the seed) for the list as served,
    # so only the world can object.
    generation = server_world.list_generation(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT))
    binding = Binding(
        EXAMPLE_AGENT, (EXAMPLE_PROJECT.lower(), False, BOTH_KINDS), "user-demo", generation
    )
    cursor = CursorSealer(default_cursor_key(SERVER_SEED).encode(), clock=clock).seal(
        10**15, binding
    )
    assert_bad_cursor(next_page(frozen_client, cursor))
