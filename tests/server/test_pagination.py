"""Pages over HTTP: newest first, every matching case exactly once, hasMore/nextCursor honest,
filters applied."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from shared import LIMIT

from .helpers import AUTH, cases_path, example_params, walk

DEFAULT_LIMIT, FULL = LIMIT["default"], LIMIT["maximum"]


def expected_ids(
    world: World, agent_id: str, project_id: str, include: str | None, kind: str | None
) -> list[str]:
    query = CaseQuery(agent_id, project_id, include_retired=include == "retired")
    if kind:
        query = CaseQuery(agent_id, project_id, include == "retired", frozenset(kind.split(",")))
    return [case["id"] for case in world.iter_cases(query)]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    include=st.sampled_from([None, "retired"]),
    kind=st.sampled_from([None, "hand", "correction", "correction,hand"]),
    limits=st.lists(st.integers(min_value=1, max_value=LIMIT["maximum"]), min_size=1, max_size=3),
    project_index=st.integers(min_value=0, max_value=1),
)
def test_walking_the_pages_yields_every_matching_case_once_newest_first(
    client: httpx.Client,
    server_world: World,
    include: str | None,
    kind: str | None,
    limits: list[int],
    project_index: int,
) -> None:
    project = server_world.project_ids(EXAMPLE_AGENT)[project_index]
    params = {
        k: v
        for k, v in {"projectId": project.upper(), "include": include, "kind": kind}.items()
        if v
    }
    pages = walk(client, EXAMPLE_AGENT, params, limits)
    cases = [case for page in pages for case in page["data"]]
    assert [case["id"] for case in cases] == expected_ids(
        server_world, EXAMPLE_AGENT, project, include, kind
    )
    assert [case["addedAt"] for case in cases] == sorted(
        (case["addedAt"] for case in cases), reverse=True
    )
    assert all(len(page["data"]) <= limits[i % len(limits)] for i, page in enumerate(pages))
    assert all(page["data"] for page in pages[:-1]), "only the last page may be empty"


def test_every_page_but_the_last_is_full(client: httpx.Client) -> None:
    pages = walk(client, EXAMPLE_AGENT, {"projectId": EXAMPLE_PROJECT}, [40])
    assert [len(page["data"]) for page in pages[:-1]] == [40] * (len(pages) - 1)
    assert "nextCursor" not in pages[-1] and pages[-1]["hasMore"] is False


def test_limit_defaults_to_the_documented_default(client: httpx.Client) -> None:
    page = client.get(cases_path(), params=example_params(), headers=AUTH).json()
    assert len(page["data"]) == DEFAULT_LIMIT


def test_retired_cases_only_with_include_retired(client: httpx.Client, server_world: World) -> None:
    active = walk(client, EXAMPLE_AGENT, example_params(), [FULL])
    everything = walk(client, EXAMPLE_AGENT, example_params(include="retired"), [FULL])
    assert not any("retired" in case for page in active for case in page["data"])
    assert any("retired" in case for page in everything for case in page["data"])


@pytest.mark.parametrize("kind", ["hand", "correction"])
def test_kind_filter_returns_only_that_kind(client: httpx.Client, kind: str) -> None:
    pages = walk(client, EXAMPLE_AGENT, example_params(kind=kind, include="retired"), [FULL])
    kinds = {case["kind"] for page in pages for case in page["data"]}
    assert kinds == {kind}


def test_cases_are_narrowed_to_the_project(client: httpx.Client, server_world: World) -> None:
    project = server_world.project_ids(EXAMPLE_AGENT)[1]
    page = client.get(
        cases_path(), params={"projectId": project, "limit": FULL}, headers=AUTH
    ).json()
    assert page["data"] and {case["projectId"] for case in page["data"]} == {project}


@pytest.mark.parametrize(
    "project", ["00000000-0000-0000-0000-000000000000", "A60767BC-F81B-4009-86CC-372B632C4C53"]
)
def test_project_not_of_the_agent_is_an_empty_last_page(client: httpx.Client, project: str) -> None:
    # The second id belongs to another agent (acme.drafting), not to `example`.
    response = client.get(cases_path(), params={"projectId": project}, headers=AUTH)
    assert response.status_code == 200
    assert response.json() == {"data": [], "hasMore": False}


def test_project_id_letter_case_does_not_matter(client: httpx.Client) -> None:
    upper = client.get(
        cases_path(), params={"projectId": EXAMPLE_PROJECT.upper(), "limit": 5}, headers=AUTH
    )
    lower = client.get(
        cases_path(), params={"projectId": EXAMPLE_PROJECT.lower(), "limit": 5}, headers=AUTH
    )
    assert upper.json()["data"] == lower.json()["data"]


def test_the_reference_page_example_request_answers(client: httpx.Client) -> None:
    response = client.get(
        "/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&limit=25",
        headers=AUTH,
    )
    assert response.status_code == 200
    page: dict[str, Any] = response.json()
    assert len(page["data"]) == 25 and page["hasMore"] is True and page["nextCursor"]


@pytest.mark.parametrize("version", [None, 1, 2, 3])
def test_gradient_answers_each_version_and_the_latest_by_default(
    client: httpx.Client, server_world: World, version: int | None
) -> None:
    uuid = "123e4567-e89b-12d3-a456-426614174000"
    params = {} if version is None else {"evaluation_test_case_version": version}
    response = client.get(f"/v2/gen-ai/evaluation_test_cases/{uuid}", params=params, headers=AUTH)
    assert response.status_code == 200
    assert response.json() == {
        "evaluation_test_case": server_world.evaluation_test_case(uuid, version)
    }
