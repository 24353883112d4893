"""Who may read: a missing, malformed, expired, revoked or made-up bearer token gets 401, never a
page."""

from __future__ import annotations

from typing import Any

from evalmock.contract.sources import live, on_test_set_page, page
from evalmock.harness.checks.error_answers import expect_error
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import scenario_check
from evalmock.harness.checks.scenario import Scenario

MADE_UP_TOKEN = "evalmock-made-up-token-3b9f1c"  # well-formed (RFC 6750), issued by no one
# What Schemathesis's ignored_auth sends in place of a token (its private
# _auth_retry.INVALID_CREDENTIAL; a test keeps the two equal).
SCHEMATHESIS_INVALID_CREDENTIAL = "SCHEMATHESIS-INVALID-VALUE"
_REFUSED_TOKENS = on_test_set_page("Missing / malformed / expired / revoked bearer token.")
_NEEDS_READ = on_test_set_page("Needs read on the project.")

MISSING_OR_MALFORMED: dict[str, dict[str, Any]] = {
    "no Authorization header": {"token": None},
    "a Basic credential": {"token": None, "headers": {"Authorization": "Basic ZGVtbzpkZW1v"}},
    "an empty bearer token": {"token": None, "headers": {"Authorization": "Bearer"}},
    "a bearer token with a space in it": {
        "token": None,
        "headers": {"Authorization": "Bearer not a token"},
    },
}


# Every credential the audit makes up, which its outputs show as sent: the made-up and malformed
# ones above, and the one Schemathesis's ignored_auth sends in place of a valid token.
MADE_UP_CREDENTIALS = (
    MADE_UP_TOKEN,
    SCHEMATHESIS_INVALID_CREDENTIAL,
    *filter(
        None,
        (
            attempt["headers"]["Authorization"].partition(" ")[2].strip()
            for attempt in MISSING_OR_MALFORMED.values()
            if "headers" in attempt
        ),
    ),
)


@scenario_check(
    "test-set",
    page(on_test_set_page("--header 'Authorization: Bearer <token>'"), _REFUSED_TOKENS),
)
def missing_or_malformed_token_is_401(s: Scenario) -> None:
    """No Authorization, another scheme, an empty bearer token or a malformed one gets 401 in the
    envelope, with X-Request-Id equal to requestId (the 401's code is left open)."""
    project = s.project(token=False)
    for what, attempt in MISSING_OR_MALFORMED.items():
        expect_error(
            s.list_cases(project, own_request_id=True, **attempt),
            401,
            None,
            f"{what} was not refused with 401",
        )


@scenario_check(
    "test-set",
    page(
        _NEEDS_READ,
        reading="A token no one issued grants nothing, so it cannot read the project. Which error "
        "it gets is the "
        "document checks' business.",
    ),
)
def made_up_token_is_refused(s: Scenario) -> None:
    """A well-formed bearer token that no one issued gets an error (4xx), never the project's
    cases."""
    project = s.project(token=False)
    exchange = s.list_cases(project, token=MADE_UP_TOKEN)
    if not 400 <= exchange.status < 500:
        raise Violation(
            "a made-up token was not refused",
            expected="a 4xx error (401)",
            received=f"{exchange.status} {exchange.excerpt()}",
            exchange=exchange,
        )


@scenario_check(
    "test-set",
    page(
        _NEEDS_READ,
        reading="A caller whose token is valid but lacks read on the project gets none of its "
        "cases. The page names no "
        "status for it, so any 4xx conforms (403, 404 or 401), as does a page with no case.",
    ),
)
def caller_without_read_gets_no_cases(s: Scenario) -> None:
    """The targets' no_read_token ([auth]: valid, without read on the listed projects) is served
    none of the first project's cases: any 4xx passes, a 200 listing cases fails."""
    token = s.targets.no_read_token
    if not token:
        raise Skip(
            "the targets name no no_read_token ([auth]: a valid token without read on the projects)"
        )
    project = s.project(token=False)
    exchange = s.list_cases(project, token=token)
    body = exchange.json_or_none()
    cases = body.get("data") if exchange.status == 200 and isinstance(body, dict) else None
    if cases:
        raise Violation(
            "a caller without read on the project was served its cases",
            expected="no case: a 4xx (403, 404 or 401)",
            received=f"{exchange.status} with {len(cases)} cases",
            exchange=exchange,
        )


@scenario_check("test-set", page(_REFUSED_TOKENS))
def expired_and_revoked_tokens_are_401(s: Scenario) -> None:
    """The targets' expired_token and revoked_token ([auth]) each get 401 in the envelope."""
    tokens = {"expired": s.targets.expired_token, "revoked": s.targets.revoked_token}
    if not any(tokens.values()):
        raise Skip("the targets name no expired_token or revoked_token ([auth])")
    project = s.project(token=False)
    for what, token in tokens.items():
        if token:
            expect_error(
                s.list_cases(project, token=token),
                401,
                None,
                f"the {what} token was not refused with 401",
            )


@scenario_check(
    "gradient", live("DigitalOcean's API answers a request without a token with 401 unauthorized.")
)
def missing_token_is_401_on_digitalocean(s: Scenario) -> None:
    """A request without a token gets 401 (its body and headers are judged against DigitalOcean's
    spec)."""
    test_case = s.test_case(token=False)
    exchange = s.get_test_case(test_case.uuid, token=None)
    if exchange.status != 401:
        raise Violation(
            "a request without a token was not a 401",
            expected=401,
            received=f"{exchange.status} {exchange.excerpt()}",
            exchange=exchange,
        )
