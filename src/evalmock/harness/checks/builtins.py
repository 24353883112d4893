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
from evalmock.contract.statuses import documented, error_statuses, retry_after_statuses, spoken
from evalmock.contract.statuses import statuses as documented_statuses
from evalmock.harness.checks.registry import SCHEMATHESIS, Check, register

# The statuses the documents list are read from them (contract/statuses.py), and so are the texts
# below that name them: a response added to a document is named here without an edit.

# The statuses that refuse a request, which a request the document allows never gets: 400 for a
# malformed one; on the test-set, 404 agent-not-found too, since the targets' agents exist
# (run/fuzzing.py lets through the 400 and 404 the pages leave open).
REFUSALS = {"test-set": (400, 404), "gradient": (400,)}
# Statuses no page lists, named (when no document lists them either) as examples of what is not
# judged.
_UNLISTED = {403: "403 for a caller without read", 413: "413", 429: "429"}
_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _server_errors(api: str) -> list[int]:
    """The 5xx statuses the page documents: answers, not failures."""
    return [status for status in documented_statuses(api) if status >= 500]


def _valid_request_answers(api: str, *, live: bool) -> list[str]:
    """What a request the document allows may get: a 2xx, or an error status the document lists
    other than a refusal; a documented 500, HTTP's generic server error (RFC 9110, 15.6.1), stands
    for every 5xx."""
    errors = [s for s in error_statuses(api, live=live) if s not in REFUSALS[api]]
    if 500 in errors:
        return ["2xx", *(str(s) for s in errors if s < 500), "5xx"]
    return ["2xx", *map(str, errors)]


# What the pages allow a request to get, per built-in check with expected statuses (Schemathesis's
# configuration: run/schemathesis_schema.py). DigitalOcean's positive_data_acceptance is the live
# service's rule, so it reads the statuses of the live service too.
EXPECTED_STATUSES: dict[str, dict[str, list[str]]] = {
    "test-set": {
        "positive_data_acceptance": _valid_request_answers("test-set", live=False),
        "negative_data_rejection": ["400", "401"],
        "not_a_server_error": ["2xx", "3xx", "4xx", *map(str, _server_errors("test-set"))],
    },
    "gradient": {
        "positive_data_acceptance": _valid_request_answers("gradient", live=True),
        "negative_data_rejection": ["4xx"],
        "not_a_server_error": ["2xx", "3xx", "4xx", *map(str, _server_errors("gradient"))],
    },
}


def _named(api: str, status: int, form: str = "{status} {code}") -> str:
    """`503 database-busy`, or the status alone when its code is left open."""
    code = documented(api)[status].code
    return form.format(status=status, code=code) if code else str(status)


def _allowed_server_errors() -> str:
    """Which 5xx the test-set page documents, for not_a_server_error's reading."""
    named = [_named("test-set", s, "a {status} ({code})") for s in _server_errors("test-set")]
    if not named:
        return ""
    verb = "is" if len(named) == 1 else "are"
    return f" The test-set page documents {spoken(named)}, which {verb} allowed."


def _other_than_documented(api: str) -> str:
    named = [str(s) for s in _server_errors(api)]
    return f", other than the documented {spoken(named)}" if named else ""


def _retry_after_rule(api: str) -> str:
    named = [f"a {status}" for status in retry_after_statuses(api)]
    verb = "carries" if len(named) == 1 else "carry"
    return f", and {spoken(named)} {verb} Retry-After in whole seconds" if named else ""


def _answers_count(api: str) -> str:
    count = len(documented_statuses(api))
    return _NUMBERS[count] if count < len(_NUMBERS) else str(count)


def _status_rule() -> str:
    """status_code_conformance's rule on the test-set API, naming the statuses its page lists."""
    listed = documented_statuses("test-set", live=True)
    unlisted = ", ".join(text for status, text in _UNLISTED.items() if status not in listed)
    return (
        "A request for which the page names the answer gets a status the page documents "
        f"({', '.join(map(str, documented_statuses('test-set')))}): no bearer token, or an "
        "expired or revoked one; a projectId, include or kind outside its stated form; a cursor "
        "(not sent empty), when the runtime seals them. Other requests may get a status the page "
        f"does not list ({unlisted + ', ' if unlisted else ''}...): those are not judged."
    )


def _valid_request_errors(api: str) -> str:
    """`401, or 503 database-busy`: the error statuses a request the document allows may get."""
    statuses = EXPECTED_STATUSES[api]["positive_data_acceptance"][1:]
    return ", or ".join(_named(api, int(s)) if s.isdigit() else s for s in statuses)


def _refusals(api: str) -> str:
    return spoken([str(status) for status in REFUSALS[api]], "or")


_HTTP_METHODS = inferred(
    "HTTP's rule (RFC 9110, 15.5.6), not the page's: a path answers a method it does not serve "
    "with 405 and an "
    "Allow header. The pages document only GET."
)
_NO_SERVER_ERRORS = inferred(
    "A 5xx says the server failed, so it is never a conforming answer to a request; the pages do "
    "not say so, HTTP "
    "does." + _allowed_server_errors()
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

BUILTINS: dict[str, dict[str, tuple[str, Source]]] = {
    "test-set": {
        "not_a_server_error": (
            f"No answer is a server error{_other_than_documented('test-set')}.",
            _NO_SERVER_ERRORS,
        ),
        "status_code_conformance": (
            _status_rule(),
            page(
                *_TEST_SET_ANSWERS,
                _SEALED_CURSORS,
                reading=f"The page lists {_answers_count('test-set')} answers and the situations "
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
            f"Errors carry X-Request-Id{_retry_after_rule('test-set')}.",
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
            f"cursor gets its page (or {_valid_request_errors('test-set')}), never "
            f"{_refusals('test-set')}; with a cursor a 400 is allowed (the runtime may not take "
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
            f"{_refusals('gradient')}: the path parameter "
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
