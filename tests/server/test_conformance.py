"""Answers conform to the documents for several seeds: checked by the server itself and again by the
test."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from evalmock.contract.documents import GRADIENT, TEST_SET
from evalmock.world import World

from .helpers import AUTH, assert_conforms, cases_path, evaluation_path

SEEDS = [1, 42, 2024]
CASES = 60
FILTERS = [
    {},
    {"include": "retired"},
    {"kind": "hand"},
    {"include": "retired", "kind": "correction"},
]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_page_and_test_case_conforms(
    make_client: Callable[..., httpx.Client], seed: int
) -> None:
    world = World(seed=seed, cases=CASES)
    # validate_responses is on: a mismatch would be a 500
    client = make_client(world=world, seed=seed)
    pages = 0
    for agent in world.agent_ids():
        for project in world.project_ids(agent):
            for filters in FILTERS:
                params = {"projectId": project, "limit": 100, **filters}
                response = client.get(cases_path(agent), params=params, headers=AUTH)
                assert response.status_code == 200, response.text
                assert_conforms(TEST_SET, response)
                pages += 1
    for uuid, versions in world.evaluation_test_case_versions().items():
        for version in (None, *versions):
            params = {} if version is None else {"evaluation_test_case_version": version}
            response = client.get(evaluation_path(uuid), params=params, headers=AUTH)
            assert response.status_code == 200, response.text
            assert_conforms(GRADIENT, response)
    assert pages >= len(FILTERS) * len(world.agent_ids())
