"""The DigitalOcean call: its error body, integer rate-limit headers, uint64 strings, versions, 404s."""

from __future__ import annotations

import re
from typing import Any

from evalmock.contract.documents import GRADIENT
from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.scenario import Scenario

RATELIMIT_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")
UINT64_FIELDS = (("created_by_user_id",), ("updated_by_user_id",), ("dataset", "file_size"))
# The document's uint64 pattern, matched whole (its ^…$ anchors become fullmatch).
UINT64 = re.compile(GRADIENT.spec["components"]["schemas"]["uint64"]["pattern"].removeprefix("^").removesuffix("$"))
UNKNOWN_TEST_CASE = "00000000-0000-4000-8000-00000000dead"
MALFORMED_TEST_CASE = "not-a-uuid"
VERSION = "evaluation_test_case_version"


def _test_case(exchange: Exchange) -> dict[str, Any] | None:
    if exchange.status != 200:
        return None
    body = exchange.json_or_none()
    if isinstance(body, dict) and isinstance(body.get("evaluation_test_case"), dict):
        return body["evaluation_test_case"]
    return None


@response_check("gradient")
def ratelimit_headers_are_integers(exchange: Exchange) -> bool | None:
    """"every response, errors included, carries the integer rate-limit headers `ratelimit-limit`,
    `ratelimit-remaining` and `ratelimit-reset`"."""
    for name in RATELIMIT_HEADERS:
        value = exchange.header(name)
        if value is None or not re.fullmatch(r"-?[0-9]+", value.strip()):
            raise Violation(f"a {exchange.status} lacks an integer {name} header", expected=f"{name}: <integer>",
                            received=value if value is not None else "(no header)")
    return True


@response_check("gradient")
def error_body_is_digitalocean_s(exchange: Exchange) -> bool | None:
    """"Errors answer with DigitalOcean's error body (`id`, `message`, optional `request_id`)", as
    application/json."""
    if exchange.status < 400 or not exchange.has_body:
        return None
    body = exchange.json_or_none()
    if exchange.media_type != "application/json":
        raise Violation(f"a {exchange.status} answered with another media type", expected="application/json",
                        received=exchange.header("content-type") or "(none)")
    if not (isinstance(body, dict) and isinstance(body.get("id"), str) and body["id"]
            and isinstance(body.get("message"), str)):
        raise Violation(f"a {exchange.status} body is not DigitalOcean's error body",
                        expected='{"id": "...", "message": "...", "request_id"?: "..."}',
                        received=body if body is not None else exchange.text[:200])
    if "request_id" in body and not isinstance(body["request_id"], str):
        raise Violation("request_id is not a string", expected="a string", received=body["request_id"])
    return True


@response_check("gradient")
def uint64_fields_are_strings(exchange: Exchange) -> bool | None:
    """"Integer fields of format uint64 travel as strings" (created_by_user_id, updated_by_user_id,
    dataset.file_size): decimal digits in a string."""
    test_case = _test_case(exchange)
    if test_case is None:
        return None
    for path in UINT64_FIELDS:
        value: Any = test_case
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None and not (isinstance(value, str) and UINT64.fullmatch(value)):
            raise Violation(f"{'.'.join(path)} is not a uint64 string", expected='a decimal string like "12345"',
                            received=value)
    return True


@response_check("gradient")
def body_is_the_requested_version(exchange: Exchange) -> bool | None:
    """"With `evaluation_test_case_version`, that version of it": the body's `version`, when sent, equals
    the requested one."""
    test_case = _test_case(exchange)
    requested = exchange.query.get(VERSION)
    if test_case is None or requested is None or "version" not in test_case or exchange.ambiguous(VERSION):
        return None
    if str(test_case["version"]) != requested.strip():
        raise Violation("the answer is another version than the one asked for", expected=requested,
                        received=test_case["version"])
    return True


@response_check("gradient")
def body_is_the_requested_test_case(exchange: Exchange) -> bool | None:
    """"Returns one evaluation test case": the one the path names (`test_case_uuid`, when sent, equals the
    path's, in any letter case)."""
    test_case = _test_case(exchange)
    if test_case is None or "test_case_uuid" not in test_case:
        return None
    requested = exchange.path_segment(3)
    if str(test_case["test_case_uuid"]).lower() != requested.lower():
        raise Violation("the answer is another test case than the path names", expected=requested,
                        received=test_case["test_case_uuid"])
    return True


# -- scenarios --------------------------------------------------------------------------------------------
def _expect_test_case(exchange: Exchange, what: str) -> dict[str, Any]:
    test_case = _test_case(exchange)
    if test_case is None:
        raise Violation(f"{what} did not answer 200 with an evaluation_test_case", expected=200,
                        received=f"{exchange.status} {exchange.text[:200]}", exchange=exchange)
    return test_case


def _expect_do_error(exchange: Exchange, status: int, what: str) -> None:
    if exchange.status != status:
        raise Violation(what, expected=status, received=f"{exchange.status} {exchange.text[:200]}", exchange=exchange)
    error_body_is_digitalocean_s(exchange)
    ratelimit_headers_are_integers(exchange)


@scenario_check("gradient")
def each_version_is_that_version(s: Scenario) -> None:
    """"With `evaluation_test_case_version`, that version of it": each known version of a known test case
    answers 200 with `version` equal to it."""
    test_case = s.test_case()
    if not test_case.versions:
        raise Skip("the targets list no versions for the test case")
    for version in test_case.versions:
        body = _expect_test_case(s.get_test_case(test_case.uuid, version), f"version {version}")
        if body.get("version") != version:
            raise Violation(f"asking for version {version} gave another", expected=version,
                            received=body.get("version", "(no version)"))


@scenario_check("gradient")
def no_version_is_the_latest(s: Scenario) -> None:
    """"Left out, the latest version": without `evaluation_test_case_version` the answer is the highest
    version the targets know."""
    test_case = s.test_case()
    if test_case.latest is None:
        raise Skip("the targets list no versions for the test case")
    body = _expect_test_case(s.get_test_case(test_case.uuid), "the test case without a version")
    if body.get("version") != test_case.latest:
        raise Violation("without a version, the answer is not the latest", expected=test_case.latest,
                        received=body.get("version", "(no version)"))


@scenario_check("gradient")
def unknown_test_case_is_404(s: Scenario) -> None:
    """"an unknown or malformed id is a 404 (never a 400)", with DigitalOcean's error body and the
    rate-limit headers."""
    s.require_token()
    _expect_do_error(s.get_test_case(UNKNOWN_TEST_CASE), 404, "an unknown test case was not a 404")
    _expect_do_error(s.get_test_case(MALFORMED_TEST_CASE), 404, "a malformed test case id was not a 404")


@scenario_check("gradient")
def missing_token_is_digitalocean_401(s: Scenario) -> None:
    """"Authentication failed because the token is missing or not valid" -> 401 with DigitalOcean's error
    body and the rate-limit headers."""
    test_case = s.test_case()
    _expect_do_error(s.get_test_case(test_case.uuid, token=None), 401, "a request without a token was not a 401")
