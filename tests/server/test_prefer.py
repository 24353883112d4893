"""Prefer (code, example, delay), server latency and error rate: answers the documents declare,
nothing else."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from evalmock.contract.documents import GRADIENT, TEST_SET
from evalmock.contract.statuses import error_codes, error_statuses, statuses
from evalmock.server import prefer as prefer_module
from evalmock.server.errors import ApiError, for_status
from evalmock.server.prefer import Latency, Preferences, parse_prefer

from .helpers import (
    AUTH,
    assert_conforms,
    assert_digitalocean_error,
    assert_envelope,
    cases_path,
    evaluation_path,
    example_params,
)


def prefer(client: httpx.Client, value: str, path: str | None = None) -> httpx.Response:
    params = example_params() if path is None else None
    return client.get(path or cases_path(), params=params, headers={**AUTH, "Prefer": value})


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["code=503"], Preferences(code=503)),
        (["code=200, example=page"], Preferences(code=200, example="page")),
        (['example="retired"; q=1', "delay=250"], Preferences(example="retired", delay_ms=250)),
        (["code=404, code=503"], Preferences(code=404)),  # RFC 7240: the first of each counts
        # unknown preferences are ignored
        (
            ["return=minimal, respond-async, wait=5"],
            Preferences(),
        ),
        (["CODE=401"], Preferences(code=401)),
    ],
)
def test_parse_prefer(values: list[str], expected: Preferences) -> None:
    assert parse_prefer(values) == expected


@pytest.mark.parametrize(
    "value", ["code=abc", "code=", "code=99", "code=600", "delay=-1", "delay=60001", "example="]
)
def test_parse_prefer_refuses_malformed_values(value: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_prefer([value])
    assert caught.value.status == 400 and caught.value.details == {"parameter": "Prefer"}


def test_a_prefer_value_sent_again_gets_the_same_answer_refused_ones_too(
    client: httpx.Client,
) -> None:
    for value, status in (("example=page", 200), ("code=abc", 400), ("code=404", 404)):
        answers = [prefer(client, value) for _ in range(2)]
        assert [answer.status_code for answer in answers] == [status, status]
        bodies = [answer.json() for answer in answers]
        for body in bodies:
            body.get("error", {}).pop("requestId", None)  # each request's own
        assert bodies[0] == bodies[1]


@pytest.mark.parametrize("status", error_statuses("test-set"))
def test_prefer_code_answers_each_declared_error_with_its_canonical_code(
    client: httpx.Client, status: int
) -> None:
    # the code the document names (400 bad-input, 404 agent-not-found, 503 database-busy), else the
    # server's own for the status (401 unauthorized: the page leaves its code open)
    code = error_codes("test-set").get(status) or for_status(status).code
    assert_envelope(prefer(client, f"code={status}"), status, code)


@pytest.mark.parametrize("path", [cases_path(), evaluation_path()])
def test_a_forced_401_carries_the_challenge_a_real_one_does(
    client: httpx.Client, path: str
) -> None:
    real = client.get(path, params=example_params() if path == cases_path() else {})
    forced = prefer(client, "code=401", None if path == cases_path() else path)
    assert real.status_code == forced.status_code == 401
    assert (
        forced.headers["www-authenticate"]
        == real.headers["www-authenticate"]
        == 'Bearer realm="evalmock"'
    )


def without_cursor(response: httpx.Response) -> tuple[int, str, dict[str, Any]]:
    """Status, the cursor's version and position, and the page without its cursor. A cursor's first
    12 characters are base64 of its first 9 bytes (version, position); the rest seals the issue
    time, in whole seconds, which two requests made across a second's turn do not share."""
    page = response.json()
    return response.status_code, page.pop("nextCursor")[:12], page


def test_prefer_code_200_is_the_real_answer(client: httpx.Client) -> None:
    forced = without_cursor(prefer(client, "code=200"))
    plain = without_cursor(client.get(cases_path(), params=example_params(), headers=AUTH))
    assert forced[0] == 200 and forced == plain


@pytest.mark.parametrize("name", ["page", "retired", "empty"])
def test_prefer_example_answers_the_named_example(client: httpx.Client, name: str) -> None:
    response = prefer(client, f"example={name}")
    assert response.status_code == 200
    assert (
        response.json()
        == TEST_SET.spec["paths"]["/agents/{agentId}/test-set/cases"]["get"]["responses"]["200"][
            "content"
        ]["application/json"]["examples"][name]["value"]
    )
    assert_conforms(TEST_SET, response)


@pytest.mark.parametrize(
    ("value", "status"),
    [("code=400, example=bad-cursor", 400), ("code=503, example=database-busy", 503)],
)
def test_prefer_error_example_keeps_this_requests_id(
    client: httpx.Client, value: str, status: int
) -> None:
    response = prefer(client, value)
    error = assert_envelope(response, status, "bad-input" if status == 400 else "database-busy")
    assert error["requestId"] == response.headers["x-request-id"]  # not the example's fixed id
    if status == 503:
        assert int(response.headers["retry-after"]) == error["details"]["retryAfterSeconds"]


@pytest.mark.parametrize(
    ("value", "mentions"),
    [
        ("code=418", ", ".join(map(str, statuses("test-set", live=True)))),
        ("example=nope", "page, retired, empty"),
        ("code=503, example=page", "database-busy"),
        ("code=xyz", "whole number"),
    ],
)
def test_prefer_naming_what_the_document_lacks_is_400_listing_the_choices(
    client: httpx.Client, value: str, mentions: str
) -> None:
    error = assert_envelope(prefer(client, value), 400, "bad-input")
    assert error["details"] == {"parameter": "Prefer"} and mentions in error["message"]


def test_prefer_needs_a_valid_request(client: httpx.Client) -> None:
    response = client.get(
        cases_path(), params={"projectId": "nope"}, headers={**AUTH, "Prefer": "code=503"}
    )
    assert_envelope(response, 400, "bad-input")
    assert_envelope(
        client.get(cases_path(), params=example_params(), headers={"Prefer": "code=503"}),
        401,
        "unauthorized",
    )


@pytest.mark.parametrize(
    ("status", "error_id"),
    [
        # each status DigitalOcean's document lists, with the id of its example
        *error_codes("gradient", live=True).items(),
        # any other, under its `default` response
        (400, "bad_request"),
        (503, "server_error"),
    ],
)
def test_gradient_prefer_code_answers_digitalocean_bodies(
    client: httpx.Client, status: int, error_id: str
) -> None:
    assert_digitalocean_error(prefer(client, f"code={status}", evaluation_path()), status, error_id)


def test_gradient_503_speaks_of_the_service_not_of_the_test_set_api_s_database(
    client: httpx.Client,
) -> None:
    """DigitalOcean's document has no 503 of its own: the fallback body says what a 503 is, in its
    own words."""
    body = prefer(client, "code=503", evaluation_path()).json()
    assert body["message"] == "The service is unavailable for a moment; try again later."


def test_gradient_prefer_example_answers_the_reference_example(client: httpx.Client) -> None:
    response = prefer(client, "example=reference", evaluation_path("anything"))
    assert response.status_code == 200
    assert (
        response.json()["evaluation_test_case"]["test_case_uuid"]
        == "123e4567-e89b-12d3-a456-426614174000"
    )
    assert_conforms(GRADIENT, response)


def test_gradient_prefer_errors_are_400_bad_request(client: httpx.Client) -> None:
    body = assert_digitalocean_error(
        prefer(client, "code=302", evaluation_path()), 400, "bad_request"
    )
    assert "302" in body["message"]


def test_prefer_delay_within_bounds_is_accepted(client: httpx.Client) -> None:
    assert prefer(client, "delay=1").status_code == 200


@pytest.mark.parametrize(
    ("value", "path", "status", "applied"),
    [
        ("code=401", None, 401, "code=401"),
        ("code=503, example=database-busy", None, 503, "code=503, example=database-busy"),
        ('example="retired"; q=1, delay=1, return=minimal', None, 200, "example=retired, delay=1"),
        ("CODE=200", None, 200, "code=200"),
        ("delay=1", None, 200, "delay=1"),
        ("code=429", evaluation_path(), 429, "code=429"),
        ("example=reference", evaluation_path(), 200, "example=reference"),
    ],
)
def test_an_answer_prefer_shaped_says_so_in_preference_applied(
    client: httpx.Client, value: str, path: str | None, status: int, applied: str
) -> None:
    # RFC 7240: the preferences honoured, each once and in one order; unknown ones (return=minimal)
    # are not.
    response = prefer(client, value, path)
    assert response.status_code == status
    assert response.headers.get_list("preference-applied") == [applied]


@pytest.mark.parametrize("value", [None, "return=minimal", "delay=0"])
def test_an_answer_no_preference_shaped_has_no_preference_applied(
    client: httpx.Client, value: str | None
) -> None:
    headers = {**AUTH, **({"Prefer": value} if value else {})}
    response = client.get(cases_path(), params=example_params(), headers=headers)
    assert response.status_code == 200 and "preference-applied" not in response.headers


def test_a_browser_page_may_read_preference_applied(client: httpx.Client) -> None:
    response = client.get(
        cases_path(),
        params=example_params(),
        headers={**AUTH, "Prefer": "code=401", "Origin": "http://localhost:3000"},
    )
    assert response.headers["preference-applied"] == "code=401"
    assert "preference-applied" in response.headers["access-control-expose-headers"].lower()


def test_a_refused_prefer_is_not_said_to_be_applied(client: httpx.Client) -> None:
    response = prefer(client, "code=418")
    assert response.status_code == 400 and "preference-applied" not in response.headers


def test_latency_samples_stay_within_the_range() -> None:
    latency = Latency(50, 400, random.Random(1))
    samples = [latency.sample() for _ in range(200)]
    assert min(samples) >= 50 and max(samples) <= 400 and len(set(samples)) > 1
    assert Latency(30, 30, random.Random(1)).sample() == 30


def test_latency_delays_every_api_request_and_prefer_delay_adds_to_it(
    make_client: Callable[..., httpx.Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses: list[int] = []

    async def record(milliseconds: int) -> None:
        pauses.append(milliseconds)

    monkeypatch.setattr(prefer_module, "pause", record)
    slow = make_client(latency_ms=(20, 30))
    assert slow.get(cases_path(), params=example_params(limit=1), headers=AUTH).status_code == 200
    assert slow.get(cases_path(), params=example_params()).status_code == 401
    assert slow.get(evaluation_path(), headers={**AUTH, "Prefer": "delay=500"}).status_code == 200
    assert slow.get("/v1/openapi.json").status_code == 200  # not an API operation: no latency
    assert len(pauses) == 4 and all(20 <= p <= 30 for p in pauses[:3]) and pauses[3] == 500


def test_error_rate_one_fails_every_request_with_the_apis_transient_error(
    make_client: Callable[..., httpx.Client],
) -> None:
    failing = make_client(error_rate=1.0)
    response = failing.get(cases_path(), params=example_params(), headers=AUTH)
    assert_envelope(response, 503, "database-busy")
    assert response.headers["retry-after"].isdigit()
    assert_digitalocean_error(
        failing.get(evaluation_path(), headers=AUTH), 429, "too_many_requests"
    )
    # An explicit Prefer wins over the error rate; a delay alone does not, and the failure says it
    # was applied.
    assert prefer(failing, "code=200").status_code == 200
    delayed = prefer(failing, "delay=1")
    assert delayed.status_code == 503 and delayed.headers["preference-applied"] == "delay=1"


def test_error_rate_zero_never_fails(client: httpx.Client) -> None:
    responses = [
        client.get(cases_path(), params=example_params(limit=1), headers=AUTH) for _ in range(20)
    ]
    assert {r.status_code for r in responses} == {200}


@pytest.mark.parametrize("source", ["Prefer: code=429", "--error-rate 1"])
def test_a_gradient_429_carries_digitalocean_s_ratelimit_headers_and_a_retry_after(
    make_client: Callable[..., httpx.Client], source: str
) -> None:
    if source.startswith("Prefer"):
        response = prefer(make_client(), "code=429", evaluation_path())
    else:
        response = make_client(error_rate=1.0).get(evaluation_path(), headers=AUTH)
    assert_digitalocean_error(response, 429, "too_many_requests")  # the ratelimit-* integers too
    assert response.headers.get("retry-after", "").isdigit(), response.headers
    assert_conforms(GRADIENT, response)
