"""DigitalOcean's public OpenAPI description as a second judge: every `/v2` answer the mock gives
(each version of each test case, 401, 404, 400, 429 from --error-rate, every forced answer) is valid
against it, and a body broken as a client would notice is refused by it."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openapi_spec_validator import OpenAPIV30SpecValidator

from digitalocean_public import SPEC_PATH, answer_errors, body_errors, spec
from evalmock.world import World
from evalmock.world.gradient import EXAMPLE_TEST_CASE

from .helpers import AUTH, evaluation_path

UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def client(make_client: Callable[..., httpx.Client]) -> httpx.Client:
    """The mock as users run it: without its own response validation, so that DigitalOcean's
    description is the only judge here."""
    return make_client(validate_responses=False)


def assert_digitalocean_accepts(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, response.text
    problems = answer_errors(response)
    assert not problems, f"DigitalOcean's description refuses the {status}: {problems}"


def test_the_fixture_names_its_source_and_is_a_valid_openapi_document() -> None:
    header = SPEC_PATH.read_text(encoding="utf-8").split("\nopenapi:", 1)[0]
    assert "https://github.com/digitalocean/openapi" in header
    assert "Apache License 2.0" in header
    assert "specification/resources/gen-ai/genai_get_evaluation_test_case.yml" in header
    assert re.search(r"\b[0-9a-f]{40}\b", header), "the fixture names no commit"
    assert not list(OpenAPIV30SpecValidator(spec()).iter_errors())


def test_every_version_of_every_test_case_is_valid_against_digitalocean(
    client: httpx.Client, server_world: World
) -> None:
    versions = server_world.evaluation_test_case_versions()
    assert len(versions) >= 10
    for uuid, numbers in versions.items():
        latest = client.get(evaluation_path(uuid), headers=AUTH)
        assert_digitalocean_accepts(latest, 200)
        assert latest.json()["evaluation_test_case"]["version"] == max(numbers)
        for number in numbers:
            response = client.get(
                evaluation_path(uuid),
                params={"evaluation_test_case_version": number},
                headers=AUTH,
            )
            assert_digitalocean_accepts(response, 200)
            assert response.json()["evaluation_test_case"]["version"] == number


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-token"),
        pytest.param({"Authorization": "Bearer not-a-token-anyone-issued"}, id="unknown-token"),
        pytest.param({"Authorization": "Bearer demo-expired"}, id="expired"),
        pytest.param({"Authorization": "Bearer demo-revoked"}, id="revoked"),
        pytest.param({"Authorization": "Basic ZGVtbzpkZW1v"}, id="another-scheme"),
    ],
)
def test_a_refused_token_is_digitalocean_s_401(
    client: httpx.Client, headers: dict[str, str]
) -> None:
    assert_digitalocean_accepts(client.get(evaluation_path(), headers=headers), 401)


@pytest.mark.parametrize(
    ("uuid", "params"),
    [
        pytest.param(UNKNOWN_UUID, {}, id="unknown-uuid"),
        pytest.param("not-a-uuid", {}, id="malformed-uuid"),
        pytest.param(EXAMPLE_TEST_CASE, {"evaluation_test_case_version": 0}, id="version-0"),
        pytest.param(EXAMPLE_TEST_CASE, {"evaluation_test_case_version": 999}, id="no-version"),
    ],
)
def test_what_does_not_exist_is_digitalocean_s_404(
    client: httpx.Client, uuid: str, params: dict[str, Any]
) -> None:
    response = client.get(evaluation_path(uuid), params=params, headers=AUTH)
    assert_digitalocean_accepts(response, 404)


def test_a_version_that_is_no_integer_is_valid_as_digitalocean_s_default(
    client: httpx.Client,
) -> None:
    response = client.get(
        evaluation_path(), params={"evaluation_test_case_version": "two"}, headers=AUTH
    )
    assert_digitalocean_accepts(response, 400)


def test_the_error_rate_s_429_is_digitalocean_s(make_client: Callable[..., httpx.Client]) -> None:
    flaky = make_client(error_rate=1.0, validate_responses=False)
    assert_digitalocean_accepts(flaky.get(evaluation_path(), headers=AUTH), 429)


@pytest.mark.parametrize(
    ("prefer", "status"),
    [
        ("code=200", 200),
        ("example=reference", 200),
        ("code=400", 400),
        ("code=401", 401),
        ("code=404", 404),
        ("code=418", 418),
        ("code=429", 429),
        ("code=500", 500),
        ("code=503", 503),
        ("bogus=1, code=nope", 400),  # a refused Prefer: the mock's own 400
    ],
)
def test_every_forced_answer_is_valid_against_digitalocean(
    client: httpx.Client, prefer: str, status: int
) -> None:
    response = client.get(evaluation_path(), headers={**AUTH, "Prefer": prefer})
    assert_digitalocean_accepts(response, status)


def _one_answer(client: httpx.Client) -> dict[str, Any]:
    response = client.get(evaluation_path(), headers=AUTH)
    assert not body_errors(200, response.json())
    return response.json()


BREAKS = [
    pytest.param(("metrics", 0, "range_max"), "12.5", "range_max", id="range_max-a-string"),
    pytest.param(("version",), "3", "version", id="version-a-string"),
    pytest.param(("total_runs",), 1.5, "total_runs", id="total_runs-a-fraction"),
    pytest.param(("created_by_user_id",), 12345, "created_by_user_id", id="uint64-a-number"),
    pytest.param(("metrics", 0, "category"), "CORRECTNESS", "category", id="category-off-enum"),
    pytest.param(("updated_at",), "yesterday", "updated_at", id="date-time-not-one"),
    pytest.param(("dataset", "has_ground_truth"), "true", "has_ground_truth", id="bool-a-string"),
    pytest.param(("metrics",), {"0": {}}, "metrics", id="metrics-no-array"),
]


@pytest.mark.parametrize(("path", "value", "named"), BREAKS)
def test_a_broken_body_is_refused_by_digitalocean_s_description(
    client: httpx.Client, path: tuple[Any, ...], value: Any, named: str
) -> None:
    body = copy.deepcopy(_one_answer(client))
    node = body["evaluation_test_case"]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    problems = body_errors(200, body)
    assert any(named in problem for problem in problems), problems


def test_an_error_body_without_its_message_is_refused() -> None:
    assert body_errors(404, {"id": "not_found", "message": "gone"}) == []
    assert body_errors(404, {"id": "not_found"})
    assert body_errors(429, {"id": 429, "message": "slow down"})


def test_a_non_integer_ratelimit_header_is_refused(client: httpx.Client) -> None:
    response = client.get(evaluation_path(), headers=AUTH)
    headers = {**response.headers, "ratelimit-remaining": "many"}
    tampered = httpx.Response(200, headers=headers, content=response.content)
    assert any("ratelimit-remaining" in problem for problem in answer_errors(tampered))
