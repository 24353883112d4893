"""Error answers of the test-set API: X-Request-Id equal to requestId, the codes the page names,
Retry-After."""

from __future__ import annotations

import re
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.sources import inferred, on_test_set_page, page
from evalmock.contract.statuses import error_codes, error_statuses, spoken
from evalmock.contract.targets import Targets
from evalmock.harness.checks.context import CheckContext
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Violation
from evalmock.harness.checks.registry import response_check, scenario_check, stating
from evalmock.harness.checks.scenario import Scenario

UNKNOWN_AGENT = "evalmock.no-such-agent"
# The statuses the page documents for errors, and the code it names for each (the 401's is left
# open): as the document states them.
DOCUMENTED_ERRORS = error_statuses("test-set")
CODE_OF_STATUS = error_codes("test-set")
# The statuses whose code the page leaves to the service.
OPEN_CODES = tuple(status for status in DOCUMENTED_ERRORS if status not in CODE_OF_STATUS)

# In the 400 block, and again in every other error block: an answer of any of them is judged by
# these words.
_REQUEST_ID = on_test_set_page(
    "Server-assigned request id; also echoed via X-Request-Id header.", every=True
)
_BUSY = on_test_set_page(
    "The database was too busy to answer in time (database-busy); Retry-After (whole "
    "seconds) says when to try again.",
)


def _codes_reading() -> str:
    """Which codes the page names, as the document states them (error_code_is_the_page_s's
    reading)."""
    named = [
        f"{status} {code}" + (" for a cursor a sealing runtime does not take" * (status == 400))
        for status, code in CODE_OF_STATUS.items()
    ]
    if len(OPEN_CODES) == 1:
        left_open = f"The {OPEN_CODES[0]}'s code is left open, and the"
    elif OPEN_CODES:
        left_open = (
            f"The codes of {spoken([f'the {s}' for s in OPEN_CODES])} are left open, and the"
        )
    else:
        left_open = "The"
    return (
        f"The page names a code for these answers: {', '.join(named)}. {left_open} code of a 400 "
        "for another reason is inferred (bad_input_is_every_400_s_code)."
    )


def _codes_rule() -> str:
    """error_code_is_the_page_s's rule: the code of each status the document names one for."""
    others = [f"a {status} {code}" for status, code in CODE_OF_STATUS.items() if status != 400]
    return (
        "A 400 refusing a cursor (of a runtime that seals them, as the targets say; the request's "
        f"other parameters are valid) says {spoken([CODE_OF_STATUS[400], *others])} in error.code."
    )


def envelope_error(exchange: Exchange) -> dict[str, Any] | None:
    body = exchange.json_or_none()
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return None


def documented_error(exchange: Exchange) -> bool:
    """An answer of the documented GET with a status the page lists for errors (other methods are
    HTTP's)."""
    return (
        exchange.method.upper() in ("GET", "HEAD")
        and exchange.status in DOCUMENTED_ERRORS
        and operation("test-set").path_parameters(exchange.path) is not None
    )


@response_check("test-set", page(_REQUEST_ID))
def request_id_header_is_the_envelope_s(context: CheckContext) -> bool | None:
    """An error's X-Request-Id header equals its envelope's requestId, whatever X-Request-Id the
    request carried (the scenarios send one of the audit's own on the errors they ask for; taking it
    is open). That the header is there at all is the document's response_headers_conformance, and
    that the envelope has a requestId its response_schema_conformance: one fact, one finding."""
    exchange = context.exchange
    header = exchange.header("x-request-id")
    if not documented_error(exchange) or not exchange.has_body or header is None:
        return None
    error = envelope_error(exchange)
    request_id = error.get("requestId") if error else None
    if not isinstance(request_id, str):
        return None
    if request_id != header:
        # The header echoes the envelope's id (the page's words): the id is expected, the header
        # received.
        raise Violation(
            "X-Request-Id differs from the envelope's requestId",
            expected=request_id,
            received=header,
        )
    return True


def _names_the_code(exchange: Exchange) -> str | None:
    """The code of a documented error answer's envelope (None when it has none, or one that is no
    string: a missing or ill-typed code is the document's response_schema_conformance finding, not
    these rules')."""
    error = envelope_error(exchange)
    code = error.get("code") if error else None
    return code if isinstance(code, str) else None


def refused_cursor(exchange: Exchange, targets: Targets | None) -> bool:
    """A 400 of a runtime that seals cursors (as the targets say) to a request with a cursor (not
    sent empty) whose other parameters are all valid: the cursor was refused, the one 400 whose code
    the page names."""
    # attribution reads the document's parameters, and imports the checks: imported here, when all
    # are loaded
    from evalmock.harness.checks.open_answers import broken_parameters, carries_a_cursor

    sealed = targets is not None and targets.sealed_cursors is True
    return (
        sealed
        and carries_a_cursor(exchange.query)
        and not broken_parameters("test-set", exchange.query_values)
    )


@response_check(
    "test-set",
    page(
        _BUSY,
        on_test_set_page("agent-not-found."),
        on_test_set_page(
            "A runtime that seals cursors takes one only for the same list, filters and caller, "
            "within "
            "a day; otherwise 400 bad-input, and the list starts again without it.",
        ),
        on_test_set_page("Stable machine-readable discriminant."),
        reading=_codes_reading(),
    ),
)
@stating(_codes_rule())  # its docstring, naming each code the document gives
def error_code_is_the_page_s(context: CheckContext) -> bool | None:
    exchange = context.exchange
    targets = context.targets
    expected = CODE_OF_STATUS.get(exchange.status)
    if expected is None or not documented_error(exchange) or not exchange.has_body:
        return None
    if exchange.status == 400 and not refused_cursor(exchange, targets):
        return None
    code = _names_the_code(exchange)
    if code is None:
        return None
    if code != expected:
        raise Violation(
            f"a {exchange.status} names another code",
            expected=expected,
            received=code,
            pointer="/error/code",
        )
    return True


@response_check(
    "test-set",
    inferred(
        "The page names bad-input only for a cursor it does not take (the cursor parameter's "
        "sentence); its 400 block, which lists projectId, "
        'include and kind, shows only the example code "example". One code for every 400 is read '
        "from that "
        "sentence, not stated.",
        on_test_set_page(
            "A runtime that seals cursors takes one only for the same list, filters and caller, "
            "within "
            "a day; otherwise 400 bad-input, and the list starts again without it.",
        ),
        on_test_set_page(
            "projectId is missing or not a project id (a UUID), or include or kind names something "
            "else.",
        ),
    ),
)
def bad_input_is_every_400_s_code(context: CheckContext) -> bool | None:
    """A 400 for anything but a cursor refused by a runtime that seals them (projectId, include,
    kind, limit, a string that is no cursor) says bad-input in error.code."""
    exchange = context.exchange
    targets = context.targets
    if (
        exchange.status != 400
        or not documented_error(exchange)
        or not exchange.has_body
        or refused_cursor(exchange, targets)
    ):
        return None
    code = _names_the_code(exchange)
    if code is None:
        return None
    if code != CODE_OF_STATUS[400]:
        raise Violation(
            "a 400 names another code",
            expected=CODE_OF_STATUS[400],
            received=code,
            pointer="/error/code",
        )
    return True


# -- scenarios
# --------------------------------------------------------------------------------------------
def expect_error(exchange: Exchange, status: int, code: str | None, what: str) -> None:
    """The exchange is an error of `status`. The rest of the answer is judged once, on every
    response, by the rule that states it (its code by error_code_is_the_page_s, its request id by
    request_id_header_is_the_envelope_s, its body by the document's checks): one fact, one finding.
    `code` only says what was expected."""
    if exchange.status != status:
        raise Violation(
            what,
            expected=f"{status}" + (f" {code}" if code else ""),
            received=f"{exchange.status} {exchange.excerpt(300)}",
            exchange=exchange,
        )


@scenario_check("test-set", page(on_test_set_page("agent-not-found.")))
def unknown_agent_is_agent_not_found(s: Scenario) -> None:
    """An agent id that names no agent gets 404 agent-not-found, never a page."""
    project = s.project()
    exchange = s.list_cases(project, agent_id=UNKNOWN_AGENT, own_request_id=True)
    expect_error(exchange, 404, CODE_OF_STATUS[404], f"agent {UNKNOWN_AGENT!r} is unknown")


@scenario_check("test-set", page(_BUSY))
def busy_answer_says_when_to_retry(s: Scenario) -> None:
    """A 503 database-busy carries Retry-After in whole seconds. Reached only with `Prefer:
    code=503`, a mock's way (ours, Prism's) to ask for an error: a real service ignores it, so
    against one this check is always skipped, and a 503 the audit meets by chance is still judged by
    the every-response checks."""
    project = s.project()
    exchange = s.list_cases(project, headers={"Prefer": "code=503"})
    if exchange.status != 503:
        raise Skip(
            "only a mock can be made busy: this check asks for a 503 with `Prefer: code=503`, "
            "which the "
            f"target ignored (it answered {exchange.status}); a real service is always skipped "
            "here, and a 503 "
            f"met by chance is judged by response_headers_conformance"
        )
    expect_error(exchange, 503, CODE_OF_STATUS[503], "the 503 answer")
    value = exchange.header("retry-after")
    if value is None or not re.fullmatch(r"[0-9]+", value.strip()):
        raise Violation(
            "a 503 without Retry-After in whole seconds",
            expected="Retry-After: <seconds>",
            received=value if value is not None else "(no header)",
            exchange=exchange,
        )
