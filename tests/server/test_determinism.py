"""Two servers started with the same seed answer byte for byte the same (with the cursors' clock
frozen)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT

from .helpers import AUTH, FrozenClock, cases_path, evaluation_path

SEED = 7
CASES = 120


def transcript(client: httpx.Client, world: World) -> list[bytes]:
    """Bodies of a fixed series of requests: a few pages of several lists, and every test case
    version."""
    bodies = []
    for agent in world.agent_ids():
        for project in world.project_ids(agent)[:2]:
            for extra in ({}, {"include": "retired", "kind": "hand"}):
                params = {"projectId": project, "limit": 30, **extra}
                for _ in range(3):
                    response = client.get(cases_path(agent), params=params, headers=AUTH)
                    bodies.append(response.content)
                    if "nextCursor" not in response.json():
                        break
                    params["cursor"] = response.json()["nextCursor"]
    for uuid, versions in world.evaluation_test_case_versions().items():
        for version in (None, *versions):
            params = {} if version is None else {"evaluation_test_case_version": version}
            bodies.append(client.get(evaluation_path(uuid), params=params, headers=AUTH).content)
    return bodies


def test_two_starts_with_the_same_seed_answer_identical_bytes(
    make_client: Callable[..., httpx.Client],
) -> None:
    first_world, second_world = World(seed=SEED, cases=CASES), World(seed=SEED, cases=CASES)
    first = transcript(make_client(world=first_world, clock=FrozenClock(), seed=SEED), first_world)
    second = transcript(
        make_client(world=second_world, clock=FrozenClock(), seed=SEED), second_world
    )
    assert len(first) > 20
    assert first == second


def test_another_seed_answers_other_bytes(make_client: Callable[..., httpx.Client]) -> None:
    worlds = World(seed=SEED, cases=CASES), World(seed=SEED + 1, cases=CASES)
    bodies = [
        make_client(world=world, clock=FrozenClock(), seed=world.seed)
        .get(
            cases_path(EXAMPLE_AGENT),
            params={"projectId": world.project_ids(EXAMPLE_AGENT)[1]},
            headers=AUTH,
        )
        .content
        for world in worlds
    ]
    assert bodies[0] != bodies[1]


def test_only_the_cursor_issue_time_differs_when_the_clock_moves(
    make_client: Callable[..., httpx.Client],
) -> None:
    world = World(seed=SEED, cases=CASES)
    clock = FrozenClock()
    client = make_client(world=world, clock=clock, seed=SEED)
    params = {"projectId": world.project_ids(EXAMPLE_AGENT)[0], "limit": 5}
    before = client.get(cases_path(EXAMPLE_AGENT), params=params, headers=AUTH).json()
    clock.advance(60)
    after = client.get(cases_path(EXAMPLE_AGENT), params=params, headers=AUTH).json()
    assert before["nextCursor"] != after["nextCursor"]
    assert {**before, "nextCursor": None} == {**after, "nextCursor": None}
