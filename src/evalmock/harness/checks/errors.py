"""Errors of the test-set API: the envelope, X-Request-Id, the codes the pages name, Retry-After, 401s."""

from __future__ import annotations

import re

from evalmock.harness.checks.base import Exchange, Skip, Violation
from evalmock.harness.checks.registry import response_check, scenario_check
from evalmock.harness.operations import operation
from evalmock.harness.scenario import Scenario

UNKNOWN_AGENT = "evalmock.no-such-agent"
# Where the pages name the code of a status. The 401 code is left open (only "unauthorized" is an example).
CODE_OF_STATUS = {400: "bad-input", 404: "agent-not-found", 503: "database-busy"}


def _envelope_error(exchange: Exchange) -> dict | None:
    body = exchange.json_or_none()
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return None


@response_check("test-set")
def error_body_is_the_envelope(exchange: Exchange) -> bool | None:
    """Every error answers with the same envelope, `{"error": {code, message, details, requestId}}`
    (application/json; `details`, when present, is an object)."""
    if exchange.status < 400 or not exchange.has_body:
        return None
    if exchange.media_type != "application/json":
        raise Violation(
            f"a {exchange.status} answered with another media type",
            expected="application/json", received=exchange.header("content-type") or "(none)",
        )
    error = _envelope_error(exchange)
    if error is None:
        raise Violation(f"a {exchange.status} body is not the error envelope",
                        expected='{"error": {"code", "message", "details", "requestId"}}',
                        received=exchange.text[:300] or "(empty body)")
    problems = []
    for key in ("code", "requestId"):
        if not isinstance(error.get(key), str) or not error[key]:
            problems.append(f"error.{key} must be a non-empty string")
    if not isinstance(error.get("message"), str):
        problems.append("error.message must be a string")
    if "details" in error and not isinstance(error["details"], dict):
        problems.append("error.details must be an object")
    if problems:
        raise Violation("; ".join(problems), expected="a complete error envelope", received={"error": error})
    return True


@response_check("test-set")
def request_id_header_is_the_envelope_s(exchange: Exchange) -> bool | None:
    """Every error echoes `requestId` in the `X-Request-Id` header ("Server-assigned request id; also
    echoed in the X-Request-Id header")."""
    if exchange.status < 400:
        return None
    header = exchange.header("x-request-id")
    if not header:
        raise Violation(f"a {exchange.status} has no X-Request-Id header", expected="X-Request-Id: <requestId>",
                        received="(no header)")
    if not exchange.has_body:
        return True
    error = _envelope_error(exchange)
    request_id = error.get("requestId") if error else None
    if request_id != header:
        raise Violation("X-Request-Id differs from the envelope's requestId", expected=header, received=request_id)
    return True


@response_check("test-set")
def error_code_is_the_page_s(exchange: Exchange) -> bool | None:
    """A 400 is `bad-input`, a 404 on the operation is `agent-not-found` ("no agent has this id"), a 503 is
    `database-busy`. The 401 code is left open by the pages."""
    expected = CODE_OF_STATUS.get(exchange.status)
    if expected is None or not exchange.has_body:
        return None
    # A 404 for a path that no longer names one agent segment (an agentId holding '/') is a routing answer.
    if exchange.status == 404 and (
        "/" in exchange.path_segment(2) or not exchange.path.endswith("/test-set/cases")
    ):
        return None
    error = _envelope_error(exchange)
    code = error.get("code") if error else None
    if code != expected:
        raise Violation(f"a {exchange.status} names another code", expected=expected, received=code)
    return True


@response_check("test-set")
def busy_answer_says_when_to_retry(exchange: Exchange) -> bool | None:
    """A 503 `database-busy` carries `Retry-After` in whole seconds ("Retry-After (whole seconds) says when
    to try again")."""
    if exchange.status != 503:
        return None
    value = exchange.header("retry-after")
    if value is None or not re.fullmatch(r"[0-9]+", value.strip()):
        raise Violation("a 503 without Retry-After in whole seconds", expected="Retry-After: <seconds>",
                        received=value if value is not None else "(no header)")
    return True


# -- scenarios --------------------------------------------------------------------------------------------
def expect_error(exchange: Exchange, status: int, code: str | None, what: str) -> None:
    if exchange.status != status:
        raise Violation(what, expected=f"{status}" + (f" {code}" if code else ""),
                        received=f"{exchange.status} {exchange.text[:300]}", exchange=exchange)
    error = _envelope_error(exchange)
    if error is None:
        raise Violation(f"{what}: the body is not the error envelope", expected="the error envelope",
                        received=exchange.text[:300], exchange=exchange)
    if code is not None and error.get("code") != code:
        raise Violation(f"{what}: wrong code", expected=code, received=error.get("code"), exchange=exchange)
    if exchange.header("x-request-id") != error.get("requestId"):
        raise Violation(f"{what}: X-Request-Id differs from requestId", expected=error.get("requestId"),
                        received=exchange.header("x-request-id"), exchange=exchange)


@scenario_check("test-set")
def missing_token_is_401(s: Scenario) -> None:
    """"Missing, malformed, expired or revoked bearer token" -> 401 with the envelope and X-Request-Id (the
    401 code string is left open). Tried: no Authorization, another scheme, an empty bearer token."""
    project = s.project()
    attempts = {
        "no Authorization header": {"token": None},
        "a Basic credential": {"token": None, "headers": {"Authorization": "Basic ZGVtbzpkZW1v"}},
        "an empty bearer token": {"token": None, "headers": {"Authorization": "Bearer"}},
    }
    for what, kwargs in attempts.items():
        exchange = s.list_cases(project, **kwargs)
        expect_error(exchange, 401, None, f"{what} was not refused with 401")


@scenario_check("test-set")
def unknown_agent_is_agent_not_found(s: Scenario) -> None:
    """An unknown agent is a 404 `agent-not-found` ("no agent has this id"), never a 200 empty page."""
    project = s.project()
    exchange = s.list_cases(project, agent_id=UNKNOWN_AGENT)
    expect_error(exchange, 404, "agent-not-found", f"agent {UNKNOWN_AGENT!r} is unknown")


INVALID_PARAMETERS = {
    "projectId missing": {"projectId": None},
    "projectId not a UUID": {"projectId": "not-a-uuid"},
    "include naming something else": {"include": "archived"},
    "kind naming something else": {"kind": "robot"},
    "limit 0": {"limit": 0},
    "limit 101": {"limit": 101},
}


@scenario_check("test-set")
def invalid_parameters_are_bad_input(s: Scenario) -> None:
    """400 `bad-input`: "projectId is missing or not a project id (a UUID), include or kind names something
    else, limit is out of 1..100"."""
    project = s.project()
    for what, params in INVALID_PARAMETERS.items():
        if "projectId" in params:
            path = operation("test-set").url_path(agentId=project.agent_id)
            exchange = s.get("test-set", path, {"projectId": params["projectId"]})
        else:
            exchange = s.list_cases(project, **params)
        expect_error(exchange, 400, "bad-input", f"{what} was not rejected as bad-input")


@scenario_check("test-set")
def busy_answer_has_retry_after(s: Scenario) -> None:
    """A 503 `database-busy` carries `Retry-After` (whole seconds). Reached with `Prefer: code=503`, which a
    mock may honour; a target that does not is skipped, not failed."""
    project = s.project()
    exchange = s.list_cases(project, headers={"Prefer": "code=503"})
    if exchange.status != 503:
        raise Skip(f"the target did not answer 503 to `Prefer: code=503` (got {exchange.status})")
    expect_error(exchange, 503, "database-busy", "the 503 answer")
    busy_answer_says_when_to_retry(exchange)
