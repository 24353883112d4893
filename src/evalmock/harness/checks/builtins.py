"""Schemathesis's built-in checks that the audit runs, declared per API with the source of the rule
each applies.

A built-in check judges a response against the document, so it holds a service to what the document
says; the level says how much of that the page itself states. DigitalOcean's document marks what
only the live service states (`x-evalmock-level: live`); outside the live profile Schemathesis sees
the document without it (`ApiDocument.page_spec`), and in the live profile a breach of a live part
is recorded under `conforms_to_digitalocean_s_spec` (see `evalmock.harness.checks.attribution`).

Not run, since neither operation can give them anything to act on: `missing_required_header` (no
header parameters), `use_after_free` and `ensure_resource_availability` (nothing is created or
deleted), `object_level_authorization` (nothing is created by one caller for another to read).
"""

from __future__ import annotations

from evalmock.contract.sources import (
    Source,
    inferred,
    live,
    on_digitalocean_page,
    on_test_set_page,
    page,
)
from evalmock.contract.statuses import spoken
from evalmock.harness.checks.registry import SCHEMATHESIS, Check, register
from evalmock.harness.checks.status_rules import (
    EXPECTED_STATUSES,
    allowed_server_errors,
    answers_count,
    other_than_documented,
    refusals,
    retry_after_rule,
    status_rule,
    valid_request_errors,
)

_HTTP_METHODS = inferred(
    "HTTP's rule (RFC 9110, 15.5.6), not the page's: a path answers a method it does not serve "
    "with 405 and an "
    "Allow header. The pages document only GET."
)
_NO_SERVER_ERRORS = inferred(
    "A 5xx says the server failed, so it is never a conforming answer to a request; the pages do "
    "not say so, HTTP "
    "does." + allowed_server_errors()
)
_TEST_SET_ANSWERS = (
    on_test_set_page("Page of cases."),
    on_test_set_page(
        "projectId is missing or not a project id (a UUID), or include or kind names something "
        "else.",
    ),
    on_test_set_page("Missing / malformed / expired / revoked bearer token."),
    on_test_set_page("agent-not-found."),
    on_test_set_page(
        "The database was too busy to answer in time (database-busy); Retry-After (whole seconds) "
        "says when to try again.",
    ),
)

_SEALED_CURSORS = on_test_set_page(
    "A runtime that seals cursors takes one only for the same list, filters and "
    "caller, within a day; otherwise 400 bad-input, and the list starts again "
    "without it.",
)

# The words that name statuses are read from the documents (status_rules.py).
BUILTINS: dict[str, dict[str, tuple[str, Source]]] = {
    "test-set": {
        "not_a_server_error": (
            f"No answer is a server error{other_than_documented('test-set')}.",
            _NO_SERVER_ERRORS,
        ),
        "status_code_conformance": (
            status_rule(),
            page(
                *_TEST_SET_ANSWERS,
                _SEALED_CURSORS,
                reading=f"The page lists {answers_count('test-set')} answers and the situations "
                "they are for; it never says no other status may come. So another status breaks it "
                "only where the page names what must come instead.",
            ),
        ),
        "content_type_conformance": (
            "Every documented answer is application/json.",
            page(on_test_set_page("Media typeapplication/json")),
        ),
        "response_schema_conformance": (
            "Every body matches the document's schema for its status: the page's fields, their "
            "types, formats, "
            "required marks, allowed values and bounds (docs/contract.md maps each to its page "
            "line).",
            page(
                on_test_set_page("Allowed values: correction hand"),
                on_test_set_page(">= 1 characters <= 200 characters"),
                on_test_set_page("<= 100 properties"),
                on_test_set_page(
                    "Where the item is in the run’s output, as a JSON Pointer (RFC 6901), e.g. "
                    "/matches/2.",
                ),
                reading="The page's field lists, as openapi/agent-test-set.yaml states them; these "
                "quotes stand "
                "for all of them.",
            ),
        ),
        "response_headers_conformance": (
            f"Errors carry X-Request-Id{retry_after_rule('test-set')}.",
            page(
                on_test_set_page(
                    "Server-assigned request id; also echoed via X-Request-Id header."
                ),
                on_test_set_page(
                    "The database was too busy to answer in time (database-busy); Retry-After "
                    "(whole seconds) says when to try again.",
                ),
            ),
        ),
        "positive_data_acceptance": (
            "A request the document allows that names a project the targets list and carries no "
            f"cursor gets its page (or {valid_request_errors('test-set')}), never "
            f"{refusals('test-set')}; with a cursor a 400 is allowed (the runtime may not take "
            "it), and for an agent or project the targets do not list a 400 or 404.",
            page(
                on_test_set_page("Page of cases."),
                _SEALED_CURSORS,
                *_TEST_SET_ANSWERS[2:],
            ),
        ),
        "negative_data_rejection": (
            "A request whose projectId, include or kind breaks the page's stated form (or lacks "
            "projectId) is "
            "refused with 400, or 401 when it has no valid token. A request that breaks only "
            "limit's bounds is "
            "judged by limit_outside_its_bounds_is_bad_input (inferred); one whose only fault is "
            "an empty include= "
            "or kind= is not judged (the pages leave it open: read as left out, or refused with "
            "400).",
            page(
                on_test_set_page(
                    "projectId is missing or not a project id (a UUID), or include or kind names "
                    "something else.",
                ),
            ),
        ),
        "ignored_auth": (
            "A request without a token, or with a made-up one, is refused (401), never served.",
            page(
                on_test_set_page("Needs read on the project."),
                on_test_set_page("Missing / malformed / expired / revoked bearer token."),
            ),
        ),
        "unsupported_method": ("A method the path does not serve gets 405.", _HTTP_METHODS),
        "allow_header_conformance": ("A 405 names the served methods in Allow.", _HTTP_METHODS),
    },
    "gradient": {
        "not_a_server_error": ("No answer is a server error.", _NO_SERVER_ERRORS),
        "content_type_conformance": (
            "A 200 is application/json.",
            inferred(
                "The page shows the returned test case as JSON; it names no media type.",
                on_digitalocean_page("Returns Examples"),
            ),
        ),
        "response_schema_conformance": (
            "A 200 body matches the page's AgentEvaluationTestCaseGetResponse: fields, types, "
            "formats (uint64 as "
            "decimal strings, date-times) and the 0..100 of success_threshold_pct. The metrics' "
            "three enums are the metric_enum_values rules' (a value none lists is inferred).",
            page(
                on_digitalocean_page("type AgentEvaluationTestCaseGetResponse struct{…}"),
                on_digitalocean_page("CreatedByUserID stringoptional"),
                on_digitalocean_page("formatuint64"),
                on_digitalocean_page(
                    "The success threshold for the star metric. This is a percentage value "
                    "between 0 and 100.",
                ),
                reading="The page's field list, as openapi/gradient-evaluation-test-cases.yaml "
                "states it; these "
                "quotes stand for all of it.",
            ),
        ),
        "negative_data_rejection": (
            "A request whose evaluation_test_case_version is not an int64 is refused with a 4xx.",
            inferred(
                "The page types the version as int64 but says nothing of what a malformed one "
                "gets; refusing it "
                "is the usual reading.",
                on_digitalocean_page("EvaluationTestCaseVersion param.Field[int64]optional"),
            ),
        ),
        "positive_data_acceptance": (
            "A request the document allows is answered "
            f"{spoken(EXPECTED_STATUSES['gradient']['positive_data_acceptance'], 'or')}, never "
            f"{refusals('gradient')}: the path parameter "
            "is a plain string, so an id that names nothing is a 404.",
            live(
                "DigitalOcean's service answers an unknown or malformed test case id with 404 "
                "not_found."
            ),
        ),
        "ignored_auth": (
            "A request without a token, or with a made-up one, is refused (401).",
            live(
                "DigitalOcean's API refuses a missing or invalid token with 401 unauthorized; the "
                "page shows only "
                "that the SDK is given an access token.",
                on_digitalocean_page('option.WithAccessToken("My Access Token"),'),
            ),
        ),
        "unsupported_method": ("A method the path does not serve gets 405.", _HTTP_METHODS),
        "allow_header_conformance": ("A 405 names the served methods in Allow.", _HTTP_METHODS),
    },
}

for _api, _declared in BUILTINS.items():
    for _name, (_rule, _source) in _declared.items():
        register(Check(_name, _api, "schemathesis", _rule, SCHEMATHESIS, _source))

# Where DigitalOcean's live spec says more than its page (error bodies, rate-limit headers), a
# breach of it found by Schemathesis's conformance checks is recorded here, at the live level.
LIVE_SPEC = register(
    Check(
        "conforms_to_digitalocean_s_spec",
        "gradient",
        "schemathesis",
        "Error answers have DigitalOcean's error body ({id, message, request_id?}) as "
        "application/json, and the "
        "ratelimit-limit, -remaining and -reset headers, when sent, are integers.",
        SCHEMATHESIS,
        live(
            "DigitalOcean's public OpenAPI spec: its error responses and its ratelimit-* headers "
            "(declared, not "
            "required)."
        ),
    )
)
