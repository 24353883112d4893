"""DigitalOcean's Python client (`pydo`, generated from DigitalOcean's public description) against
`evalmock serve`: each answer comes back as pydo maps it, a JSON result or its typed exception."""

from __future__ import annotations

from typing import Any

import pytest

from evalmock.world.gradient import EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS

from .conftest import MISSING

pydo = pytest.importorskip(
    "pydo", reason="pydo (the sdk extra: pip install -e '.[sdk]') is not installed"
)
azure_errors = pytest.importorskip("azure.core.exceptions", reason="pydo's azure-core is missing")

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()
TOKEN = "demo-user"
# The mock serves plain HTTP on 127.0.0.1: azure-core sends a bearer token over it only when told;
# no retries, so that a test sees the first answer.
CALL = {"enforce_https": False, "retry_total": 0}


def client(server: LiveServer, token: str = TOKEN) -> Any:
    return pydo.Client(token, endpoint=server.base_url, timeout=10)


def assert_test_case(result: dict[str, Any], version: int) -> None:
    case = result["evaluation_test_case"]
    assert (case["test_case_uuid"], case["version"]) == (EXAMPLE_TEST_CASE, version)
    assert isinstance(case["created_by_user_id"], str) and case["created_by_user_id"].isdigit()
    for metric in case["metrics"]:
        assert isinstance(metric["range_max"], float) and isinstance(metric["range_min"], float)
    assert 0 <= case["star_metric"]["success_threshold_pct"] <= 100


def test_get_gives_the_latest_version(live_server: LiveServer) -> None:
    result = client(live_server).genai.get_evaluation_test_case(EXAMPLE_TEST_CASE, **CALL)
    assert_test_case(result, EXAMPLE_VERSIONS)


@pytest.mark.parametrize("version", range(1, EXAMPLE_VERSIONS + 1))
def test_get_with_a_version_gives_that_version(live_server: LiveServer, version: int) -> None:
    result = client(live_server).genai.get_evaluation_test_case(
        EXAMPLE_TEST_CASE, evaluation_test_case_version=version, **CALL
    )
    assert_test_case(result, version)


@pytest.mark.parametrize(("uuid", "version"), MISSING)
def test_what_does_not_exist_is_the_not_found_body(
    live_server: LiveServer, uuid: str, version: int | None
) -> None:
    """pydo raises for none of the operation's 404s: it hands back DigitalOcean's error body, as
    its description declares a 404 body."""
    result = client(live_server).genai.get_evaluation_test_case(
        uuid, evaluation_test_case_version=version, **CALL
    )
    assert result["id"] == "not_found" and result["message"]
    assert "evaluation_test_case" not in result


@pytest.mark.parametrize("token", ["not-a-token-anyone-issued", "demo-expired", "demo-revoked"])
def test_a_bad_token_raises_client_authentication_error(
    live_server: LiveServer, token: str
) -> None:
    with pytest.raises(azure_errors.ClientAuthenticationError) as raised:
        client(live_server, token).genai.get_evaluation_test_case(EXAMPLE_TEST_CASE, **CALL)
    assert raised.value.status_code == 401
    assert token not in str(raised.value), "the error repeats the token"


def test_a_throttled_answer_raises_http_response_error_429(live_server: LiveServer) -> None:
    with pytest.raises(azure_errors.HttpResponseError) as raised:
        client(live_server).genai.get_evaluation_test_case(
            EXAMPLE_TEST_CASE, headers={"Prefer": "code=429"}, **CALL
        )
    assert raised.value.status_code == 429
