"""The statuses Schemathesis's built-in checks let an answer have, and the words their rules name
statuses in, read from the documents (contract/statuses.py): a response added to a document is
accepted and named without an edit here."""

from __future__ import annotations

from evalmock.contract.statuses import documented, error_statuses, retry_after_statuses, spoken
from evalmock.contract.statuses import statuses as documented_statuses

# The statuses that refuse a request, which a request the document allows never gets: 400 for a
# malformed one; on the test-set, 404 agent-not-found too, since the targets' agents exist
# (run/fuzzing.py lets through the 400 and 404 the pages leave open).
REFUSALS = {"test-set": (400, 404), "gradient": (400,)}
# Statuses no page lists, named (when no document lists them either) as examples of what is not
# judged.
_UNLISTED = {403: "403 for a caller without read", 413: "413", 429: "429"}
_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def server_errors(api: str) -> list[int]:
    """The 5xx statuses the page documents: answers, not failures."""
    return [status for status in documented_statuses(api) if status >= 500]


def valid_request_answers(api: str, *, live: bool) -> list[str]:
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
        "positive_data_acceptance": valid_request_answers("test-set", live=False),
        "negative_data_rejection": ["400", "401"],
        "not_a_server_error": ["2xx", "3xx", "4xx", *map(str, server_errors("test-set"))],
    },
    "gradient": {
        "positive_data_acceptance": valid_request_answers("gradient", live=True),
        "negative_data_rejection": ["4xx"],
        "not_a_server_error": ["2xx", "3xx", "4xx", *map(str, server_errors("gradient"))],
    },
}


def with_code(api: str, status: int) -> str:
    """`503 database-busy`, or the status alone when the page leaves its code open."""
    code = documented(api)[status].code
    return f"{status} {code}" if code else str(status)


def allowed_server_errors() -> str:
    """Which 5xx the test-set page documents, in not_a_server_error's reading."""
    found = documented("test-set")
    named = [
        f"a {s} ({found[s].code})" if found[s].code else f"a {s}" for s in server_errors("test-set")
    ]
    if not named:
        return ""
    verb = "is" if len(named) == 1 else "are"
    return f" The test-set page documents {spoken(named)}, which {verb} allowed."


def other_than_documented(api: str) -> str:
    """`, other than the documented 503`: not_a_server_error's exception."""
    named = [str(s) for s in server_errors(api)]
    return f", other than the documented {spoken(named)}" if named else ""


def retry_after_rule(api: str) -> str:
    """`, and a 503 carries Retry-After in whole seconds`: the statuses declaring Retry-After."""
    named = [f"a {status}" for status in retry_after_statuses(api)]
    verb = "carries" if len(named) == 1 else "carry"
    return f", and {spoken(named)} {verb} Retry-After in whole seconds" if named else ""


def answers_count(api: str) -> str:
    """`five`: how many answers the page lists."""
    count = len(documented_statuses(api))
    return _NUMBERS[count] if count < len(_NUMBERS) else str(count)


def status_rule() -> str:
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


def valid_request_errors(api: str) -> str:
    """`401, or 503 database-busy`: the error statuses a request the document allows may get."""
    accepted = EXPECTED_STATUSES[api]["positive_data_acceptance"][1:]
    return ", or ".join(with_code(api, int(s)) if s.isdigit() else s for s in accepted)


def refusals(api: str) -> str:
    """`400 or 404`: the statuses a request the document allows never gets."""
    return spoken([str(status) for status in REFUSALS[api]], "or")
