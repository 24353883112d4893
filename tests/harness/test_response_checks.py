"""Every per-response check passes a conforming response and fails a violating one, with expected vs received."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evalmock.harness.checks import RESPONSE_CHECKS, Exchange, Violation, errors, filters, gradient, pagination
from evalmock.harness.checks import cases as case_checks

from .builders import (
    PROJECT,
    RATELIMIT,
    correction_case,
    error,
    evaluation_answer,
    gradient_error,
    gradient_test_case,
    hand_case,
    page,
    retired_case,
)

Check = Callable[[Exchange], Any]

# check, a conforming response, a violating response (the violation named in the id)
EXAMPLES: list[tuple[Check, Exchange, Exchange, str]] = [
    # errors
    (errors.error_body_is_the_envelope, error(400, "bad-input"),
     error(400, "bad-input", body={"type": "about:blank", "title": "Bad Request", "status": 400},
           content_type="application/problem+json"), "problem+json body"),
    (errors.error_body_is_the_envelope, error(404, "agent-not-found"),
     error(404, "agent-not-found", body={"error": {"code": "agent-not-found", "message": "x", "details": [],
                                                   "requestId": "rid-1"}}), "details is a list"),
    (errors.request_id_header_is_the_envelope_s, error(401, "unauthorized"),
     error(401, "unauthorized", header=None), "no X-Request-Id"),
    (errors.request_id_header_is_the_envelope_s, error(400, "bad-input"),
     error(400, "bad-input", request_id="rid-1", header="rid-2"), "X-Request-Id differs"),
    (errors.error_code_is_the_page_s, error(404, "agent-not-found"), error(404, "not-found"), "404 not-found"),
    (errors.error_code_is_the_page_s, error(400, "bad-input"), error(400, "bad_request"), "400 bad_request"),
    (errors.error_code_is_the_page_s, error(503, "database-busy", headers={"retry-after": "2"}),
     error(503, "unavailable", headers={"retry-after": "2"}), "503 unavailable"),
    (errors.busy_answer_says_when_to_retry, error(503, "database-busy", headers={"retry-after": "2"}),
     error(503, "database-busy"), "no Retry-After"),
    (errors.busy_answer_says_when_to_retry, error(503, "database-busy", headers={"retry-after": "0"}),
     error(503, "database-busy", headers={"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}), "an HTTP date"),
    # cases
    (case_checks.hand_case_id_starts_with_case, page(), page([hand_case(id="hand-7f3a9c21")]), "hand- id"),
    (case_checks.updated_at_is_added_at_until_retired, page([correction_case(), retired_case()]),
     page([hand_case(updatedAt="2026-11-21T00:00:00Z")]), "updated active case"),
    (case_checks.retirement_is_consistent, page([retired_case()], include="retired"),
     page([retired_case(updatedAt="2026-10-29T00:00:00Z")], include="retired"), "updatedAt before retirement"),
    (case_checks.retirement_is_consistent, page([retired_case()], include="retired"),
     page([retired_case(addedAt="2026-10-31T00:00:00Z")], include="retired"), "retired before added"),
    (case_checks.hand_cases_are_expert, page([hand_case(), correction_case(expert=True)]),
     page([{k: v for k, v in hand_case().items() if k != "expert"}, correction_case(expert=True)]),
     "expert missing on a hand case"),
    (case_checks.hand_cases_are_expert, page([hand_case()]), page([hand_case(expert=False)]), "expert false"),
    (case_checks.expect_has_a_part, page(), page([hand_case(expect={})]), "empty expect"),
    (case_checks.item_ranks_are_positions, page(),
     page([correction_case(expect={"items": [{"key": "a", "rank": 1, "verdict": "right"},
                                             {"key": "b", "rank": 2, "verdict": "right"}]})]), "ranks from 1"),
    (case_checks.item_ranks_are_positions, page(),
     page([correction_case(expect={"items": [{"key": "a", "rank": 0, "verdict": "right"},
                                             {"key": "b", "rank": 0, "verdict": "right"}]})]), "repeated rank"),
    (case_checks.should_call_args_fit,
     page([hand_case(expect={"decisions": {"verdict": "wrong",
                                           "shouldCall": [{"tool": "t", "args": {"q": "x" * 3990}}]}})]),
     page([hand_case(expect={"decisions": {"verdict": "wrong",
                                           "shouldCall": [{"tool": "t", "args": {"q": "x" * 3995}}]}})]),
     "4001 characters of args"),
    # pagination
    (pagination.next_cursor_present_exactly_when_has_more, page(has_more=True, next_cursor="abc"),
     page(has_more=True), "hasMore without nextCursor"),
    (pagination.next_cursor_present_exactly_when_has_more, page(has_more=False),
     page(has_more=False, next_cursor="abc"), "nextCursor on the last page"),
    (pagination.page_holds_at_most_limit, page(limit=2), page(limit=1), "2 cases for limit=1"),
    (pagination.page_holds_at_most_limit, page([hand_case()] * 25), page([hand_case()] * 26),
     "26 cases by default"),
    (pagination.page_is_newest_first, page([hand_case(), correction_case()]),
     page([correction_case(), hand_case()]), "oldest first"),
    # filters
    (filters.cases_belong_to_the_project, page(projectId=PROJECT.upper()),
     page([hand_case(projectId="00000000-0000-4000-8000-000000000000")]), "another project's case"),
    (filters.cases_have_the_requested_kinds, page([hand_case()], kind="hand"),
     page([hand_case(), correction_case()], kind="hand"), "a correction for kind=hand"),
    (filters.retired_cases_only_with_include_retired, page([retired_case()], include="retired"),
     page([hand_case(), retired_case()]), "retired case without include"),
    # gradient
    (gradient.ratelimit_headers_are_integers, gradient_error(404),
     gradient_error(404, headers={"ratelimit-limit": "5000"}), "missing ratelimit headers"),
    (gradient.ratelimit_headers_are_integers, evaluation_answer(),
     evaluation_answer(headers={**RATELIMIT, "ratelimit-reset": "soon"}), "a non-integer header"),
    (gradient.error_body_is_digitalocean_s, gradient_error(401, {"id": "unauthorized", "message": "No."}),
     gradient_error(401, {"error": {"code": "unauthorized", "message": "No.", "requestId": "r"}}),
     "the v1 envelope on /v2"),
    (gradient.error_body_is_digitalocean_s, gradient_error(404),
     gradient_error(404, {"id": "not_found", "message": "x", "request_id": 7}), "a numeric request_id"),
    (gradient.uint64_fields_are_strings, evaluation_answer(),
     evaluation_answer(gradient_test_case(created_by_user_id=12345)), "a uint64 as an integer"),
    (gradient.uint64_fields_are_strings, evaluation_answer(),
     evaluation_answer(gradient_test_case(dataset={"file_size": 12345})), "file_size as an integer"),
    (gradient.body_is_the_requested_version, evaluation_answer(gradient_test_case(version=2), version=2),
     evaluation_answer(gradient_test_case(version=3), version=2), "the latest instead of version 2"),
    (gradient.body_is_the_requested_test_case, evaluation_answer(uuid="123E4567-E89B-12D3-A456-426614174000"),
     evaluation_answer(gradient_test_case(test_case_uuid="00000000-0000-4000-8000-000000000000")),
     "another test case"),
]
IDS = [f"{check.__name__}: {what}" for check, _, _, what in EXAMPLES]


@pytest.mark.parametrize(("check", "good", "bad", "what"), EXAMPLES, ids=IDS)
def test_check_passes_the_conforming_response(check: Check, good: Exchange, bad: Exchange, what: str) -> None:
    assert check(good) is True


@pytest.mark.parametrize(("check", "good", "bad", "what"), EXAMPLES, ids=IDS)
def test_check_fails_the_violating_response(check: Check, good: Exchange, bad: Exchange, what: str) -> None:
    with pytest.raises(Violation) as caught:
        check(bad)
    assert "expected:" in str(caught.value) and "received:" in str(caught.value)


def test_every_response_check_has_an_example() -> None:
    covered = {check.__name__ for check, *_ in EXAMPLES}
    assert {check.name for check in RESPONSE_CHECKS} <= covered


@pytest.mark.parametrize(
    ("check", "exchange"),
    [
        (errors.error_body_is_the_envelope, page()),
        (errors.busy_answer_says_when_to_retry, error(400, "bad-input")),
        (case_checks.hand_case_id_starts_with_case, error(400, "bad-input")),
        (pagination.page_holds_at_most_limit, error(404, "agent-not-found")),
        (gradient.uint64_fields_are_strings, gradient_error(404)),
        (gradient.body_is_the_requested_version, evaluation_answer()),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_check_does_not_apply_to_other_responses(check: Check, exchange: Exchange) -> None:
    assert check(exchange) is None


def test_a_page_without_expert_anywhere_is_an_older_server() -> None:
    older = page([{k: v for k, v in hand_case().items() if k != "expert"}, correction_case()])
    assert case_checks.hand_cases_are_expert(older) is True


def test_timestamps_compare_as_instants() -> None:
    same_instant = page([hand_case(addedAt="2026-11-20T09:15:02Z", updatedAt="2026-11-20T10:15:02+01:00")])
    assert case_checks.updated_at_is_added_at_until_retired(same_instant) is True


def test_a_routing_404_for_an_agent_id_holding_a_slash_is_left_alone() -> None:
    routed = error(404, "not-found", path="/v1/agents/a%2Fb/test-set/cases")
    assert errors.error_code_is_the_page_s(routed) is None


def test_the_401_code_is_left_open() -> None:
    assert errors.error_code_is_the_page_s(error(401, "token-expired")) is None
    assert errors.error_code_is_the_page_s(error(401, "whatever-the-runtime-says")) is None


def test_a_parameter_sent_twice_is_left_alone() -> None:
    twice = page([hand_case(), correction_case()])
    twice = Exchange(twice.method, twice.url + "&kind=hand&kind=correction", twice.status, twice.headers, twice.body)
    assert filters.cases_have_the_requested_kinds(twice) is None


def test_a_head_answer_needs_no_body() -> None:
    head = error(405, "method-not-allowed", body={})
    head = Exchange("HEAD", head.url, 405, head.headers, b"")
    assert errors.error_body_is_the_envelope(head) is None
    assert errors.request_id_header_is_the_envelope_s(head) is True


def test_docs_state_every_check() -> None:
    from pathlib import Path

    from evalmock.harness.checks import SCENARIO_CHECKS

    text = (Path(__file__).resolve().parents[2] / "docs" / "harness.md").read_text(encoding="utf-8")
    for check in (*RESPONSE_CHECKS, *SCENARIO_CHECKS):
        assert f"`{check.name}`" in text, check.name
