"""DigitalOcean's Gradient SDK (`gradient`, generated from DigitalOcean's description of the page's
operation) against `evalmock serve`: each answer comes back as the SDK's typed result or its typed
exception, from the sync client and the async one alike."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import pytest

from evalmock.world.gradient import EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS

from .conftest import MISSING, UNKNOWN_UUID

gradient = pytest.importorskip(
    "gradient", reason="gradient (the sdk extra: pip install -e '.[sdk]') is not installed"
)

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()
TOKEN = "demo-user"
REQUEST_TIMEOUT_S = 10.0


def sync_client(server: LiveServer, token: str = TOKEN) -> Any:
    # No retries: a test sees the first answer, and never waits out a backoff.
    return gradient.Gradient(
        access_token=token, base_url=server.base_url, max_retries=0, timeout=REQUEST_TIMEOUT_S
    )


def async_client(server: LiveServer, token: str = TOKEN) -> Any:
    return gradient.AsyncGradient(
        access_token=token, base_url=server.base_url, max_retries=0, timeout=REQUEST_TIMEOUT_S
    )


def assert_typed_test_case(result: Any, uuid: str, version: int) -> None:
    """The SDK's own models, every field of the page's type as the SDK declares it."""
    case = result.evaluation_test_case
    assert isinstance(case, gradient.types.agents.APIEvaluationTestCase)
    assert (case.test_case_uuid, case.version) == (uuid, version)
    assert isinstance(case.created_at, datetime.datetime)
    assert isinstance(case.updated_at, datetime.datetime)
    assert isinstance(case.created_by_user_id, str) and case.created_by_user_id.isdigit()
    assert isinstance(case.total_runs, int) and isinstance(case.latest_version_number_of_runs, int)
    assert isinstance(case.dataset.file_size, str) and case.dataset.file_size.isdigit()
    assert isinstance(case.dataset.row_count, int)
    assert isinstance(case.dataset.has_ground_truth, bool)
    assert case.metrics, "a test case without metrics tells a client nothing"
    for metric in case.metrics:
        assert isinstance(metric, gradient.types.agents.APIEvaluationMetric)
        assert isinstance(metric.range_max, float) and isinstance(metric.range_min, float)
        assert isinstance(metric.metric_rank, int) and isinstance(metric.inverted, bool)
    assert isinstance(case.star_metric.success_threshold, float)
    assert 0 <= case.star_metric.success_threshold_pct <= 100


def test_retrieve_gives_the_latest_version_as_the_sdk_s_model(live_server: LiveServer) -> None:
    with sync_client(live_server) as client:
        result = client.agents.evaluation_test_cases.retrieve(EXAMPLE_TEST_CASE)
    assert isinstance(result, gradient.types.agents.EvaluationTestCaseRetrieveResponse)
    assert_typed_test_case(result, EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS)


@pytest.mark.parametrize("version", range(1, EXAMPLE_VERSIONS + 1))
def test_retrieve_with_a_version_gives_that_version(live_server: LiveServer, version: int) -> None:
    with sync_client(live_server) as client:
        result = client.agents.evaluation_test_cases.retrieve(
            EXAMPLE_TEST_CASE, evaluation_test_case_version=version
        )
    assert_typed_test_case(result, EXAMPLE_TEST_CASE, version)


def test_the_raw_response_carries_the_rate_limit_headers(live_server: LiveServer) -> None:
    with sync_client(live_server) as client:
        raw = client.agents.evaluation_test_cases.with_raw_response.retrieve(EXAMPLE_TEST_CASE)
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
        assert raw.headers[name].isdigit(), (name, raw.headers.get(name))
    assert_typed_test_case(raw.parse(), EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS)


def test_the_sdk_s_strict_validation_accepts_every_version(live_server: LiveServer) -> None:
    """The SDK validates the body against its models when asked to (a mismatch raises
    APIResponseValidationError)."""
    strict = gradient.Gradient(
        access_token=TOKEN,
        base_url=live_server.base_url,
        max_retries=0,
        timeout=REQUEST_TIMEOUT_S,
        _strict_response_validation=True,
    )
    with strict as client:
        for version in range(1, EXAMPLE_VERSIONS + 1):
            result = client.agents.evaluation_test_cases.retrieve(
                EXAMPLE_TEST_CASE, evaluation_test_case_version=version
            )
            assert result.evaluation_test_case.version == version


@pytest.mark.parametrize(("uuid", "version"), MISSING)
def test_what_does_not_exist_raises_not_found_error(
    live_server: LiveServer, uuid: str, version: int | None
) -> None:
    extra = {} if version is None else {"evaluation_test_case_version": version}
    with sync_client(live_server) as client, pytest.raises(gradient.NotFoundError) as raised:
        client.agents.evaluation_test_cases.retrieve(uuid, **extra)
    assert raised.value.status_code == 404
    assert raised.value.body["id"] == "not_found"
    assert raised.value.body["request_id"] == raised.value.response.headers["x-request-id"]


@pytest.mark.parametrize("token", ["not-a-token-anyone-issued", "demo-expired", "demo-revoked"])
def test_a_bad_token_raises_authentication_error(live_server: LiveServer, token: str) -> None:
    refused = gradient.AuthenticationError
    with sync_client(live_server, token) as client, pytest.raises(refused) as raised:
        client.agents.evaluation_test_cases.retrieve(EXAMPLE_TEST_CASE)
    assert raised.value.status_code == 401
    assert raised.value.body["id"] == "unauthorized"
    assert token not in str(raised.value), "the error repeats the token"


def test_a_throttled_answer_raises_rate_limit_error(live_server: LiveServer) -> None:
    with sync_client(live_server) as client, pytest.raises(gradient.RateLimitError) as raised:
        client.agents.evaluation_test_cases.retrieve(
            EXAMPLE_TEST_CASE, extra_headers={"Prefer": "code=429"}
        )
    assert raised.value.body["id"] == "too_many_requests"


def test_a_version_that_is_no_integer_raises_bad_request_error(live_server: LiveServer) -> None:
    with sync_client(live_server) as client, pytest.raises(gradient.BadRequestError) as raised:
        client.agents.evaluation_test_cases.retrieve(
            EXAMPLE_TEST_CASE, extra_query={"evaluation_test_case_version": "two"}
        )
    assert raised.value.body["id"] == "bad_request"


def test_the_async_client_maps_every_answer_alike(live_server: LiveServer) -> None:
    async def run() -> None:
        async with async_client(live_server) as client:
            cases = client.agents.evaluation_test_cases
            assert_typed_test_case(
                await cases.retrieve(EXAMPLE_TEST_CASE), EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS
            )
            for version in range(1, EXAMPLE_VERSIONS + 1):
                result = await cases.retrieve(
                    EXAMPLE_TEST_CASE, evaluation_test_case_version=version
                )
                assert_typed_test_case(result, EXAMPLE_TEST_CASE, version)
            with pytest.raises(gradient.NotFoundError):
                await cases.retrieve(UNKNOWN_UUID)
            with pytest.raises(gradient.NotFoundError):
                await cases.retrieve(
                    EXAMPLE_TEST_CASE, evaluation_test_case_version=EXAMPLE_VERSIONS + 1
                )
        async with async_client(live_server, "not-a-token-anyone-issued") as refused:
            with pytest.raises(gradient.AuthenticationError):
                await refused.agents.evaluation_test_cases.retrieve(EXAMPLE_TEST_CASE)

    asyncio.run(run())
