"""The statuses each document lists and the code each names are the pages' (and, marked live,
DigitalOcean's service's), as contract/statuses.py reads them."""

from __future__ import annotations

from typing import Any

from evalmock.contract.operations import Response
from evalmock.contract.statuses import (
    body_code,
    error_codes,
    error_statuses,
    read_status,
    retry_after_statuses,
    spoken,
    statuses,
)


def envelope(code: str, message: str = "m") -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": {}, "requestId": "r"}}


def response(*bodies: Any, example: Any = None, headers: tuple[str, ...] = ()) -> Response:
    return Response(
        "403",
        {f"e{n}": body for n, body in enumerate(bodies)},
        example,
        live=False,
        headers=headers,
    )


def test_the_test_set_document_lists_the_page_s_five_answers() -> None:
    assert statuses("test-set") == (200, 400, 401, 404, 503)
    assert statuses("test-set", live=True) == statuses("test-set")
    assert error_statuses("test-set") == (400, 401, 404, 503)
    assert retry_after_statuses("test-set") == (503,)


def test_the_test_set_document_names_the_page_s_codes_and_leaves_the_401_s_open() -> None:
    # "agent-not-found.", "(database-busy)", "otherwise 400 bad-input"; no code for the 401
    assert error_codes("test-set") == {
        400: "bad-input",
        404: "agent-not-found",
        503: "database-busy",
    }


def test_digitalocean_s_page_documents_only_its_200_and_the_live_service_the_errors() -> None:
    assert statuses("gradient") == (200,)
    assert error_codes("gradient") == {}
    assert error_codes("gradient", live=True) == {
        401: "unauthorized",
        404: "not_found",
        429: "too_many_requests",
        500: "server_error",
    }
    assert retry_after_statuses("gradient", live=True) == (429,)


def test_a_response_whose_examples_all_name_one_code_states_it() -> None:
    found = read_status(
        "test-set", 403, response(envelope("no-read", "Not yours."), envelope("no-read"))
    )
    assert (found.status, found.code, found.message, found.is_error) == (
        403,
        "no-read",
        "Not yours.",
        True,
    )


def test_examples_naming_several_codes_leave_the_code_to_the_service() -> None:
    assert read_status("test-set", 401, response(envelope("a"), envelope("b"))).code is None


def test_a_response_without_examples_names_no_code() -> None:
    assert read_status("test-set", 403, response()).code is None
    # a body that is not the API's error body names none either
    assert read_status("test-set", 403, response({"id": "x"}, ["error"])).code is None


def test_digitalocean_s_single_example_names_its_id() -> None:
    found = read_status("gradient", 429, response(example={"id": "slow_down", "message": "Wait."}))
    assert (found.code, found.message) == ("slow_down", "Wait.")


def test_a_declared_retry_after_header_is_read() -> None:
    assert read_status("test-set", 503, response(headers=("retry-after",))).retry_after
    assert not read_status("test-set", 503, response()).retry_after


def test_an_error_body_s_code_is_read_where_its_api_puts_it() -> None:
    assert body_code("test-set", envelope("bad-input")) == "bad-input"
    assert body_code("gradient", {"id": "not_found", "message": "m"}) == "not_found"
    assert body_code("test-set", {"error": {"code": 7}}) is None
    assert body_code("test-set", None) is None


def test_spoken_lists_read_as_a_sentence() -> None:
    assert spoken(["a"]) == "a"
    assert spoken(["a", "b"], "or") == "a or b"
    assert spoken(["a", "b", "c"]) == "a, b and c"
