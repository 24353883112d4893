"""Brute-force views of a world, built without the listing code they check, and a digest of a whole
world."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from evalmock.contract.filters import narrowing
from evalmock.world import CaseQuery, World
from evalmock.world.cases import CaseFactory
from evalmock.world.catalog import AGENTS_BY_ID


def every_case(world: World, agent_id: str, project_id: str) -> list[dict[str, Any]]:
    """Generated and curated cases of one list, sorted newest first by their own addedAt."""
    factory = CaseFactory(world.seed, AGENTS_BY_ID[agent_id], project_id, world.vocabulary)
    cases = [factory.case(rank) for rank in range(world.cases)]
    cases += [c.case for c in world.curated if (c.agent_id, c.project_id) == (agent_id, project_id)]
    return sorted(cases, key=lambda case: case["addedAt"], reverse=True)


def matches(case: dict[str, Any], query: CaseQuery) -> bool:
    """Whether a case passes every filter of `query`, each as the document declares it."""
    return all(f.admits(case, query.value(f.name)) for f in narrowing())


def walk(world: World, query: CaseQuery, limits: list[int]) -> list[dict[str, Any]]:
    """Every page from the first, cycling through `limits` (a cursor is not bound to the limit)."""
    cases: list[dict[str, Any]] = []
    after = None
    for step in range(100_000):
        page = world.page(query, after, limits[step % len(limits)])
        cases += page.cases
        if page.next_position is None:
            return cases
        assert page.cases, "a page with a next position holds cases"
        after = page.next_position
    raise AssertionError("the walk did not end")


def lists(world: World) -> list[tuple[str, str]]:
    return [(agent, project) for agent in world.agent_ids() for project in world.project_ids(agent)]


def world_digest(world: World) -> str:
    """A hash of every case and every evaluation test case version, in the world's order."""
    digest = hashlib.sha256()
    for agent, project in lists(world):
        for case in world.iter_cases(CaseQuery(agent, project, include_retired=True)):
            digest.update(json.dumps(case, sort_keys=True).encode())
    for uuid, versions in world.evaluation_test_case_versions().items():
        for version in versions:
            digest.update(
                json.dumps(world.evaluation_test_case(uuid, version), sort_keys=True).encode()
            )
    return digest.hexdigest()
