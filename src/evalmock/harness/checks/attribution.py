"""Which registered check an outcome of Schemathesis's built-in checks counts for, so that each is
judged at the level of the rule it is about (a built-in check knows the document, not which part of
it the page states).

An answer whose status the document does not list breaks `status_code_conformance` (page) only where
a page sentence names what the request must get instead: no bearer token, or an expired or revoked
one (401), a projectId, include or kind outside its stated form (400), a cursor given to a runtime
that seals them (the page or 400 bad-input). Anywhere else the pages leave the status open (a caller
without read, a method they do not document, a request too large, throttling), and it is not judged.
A 501 to a method other than GET and HEAD is HTTP's answer for a method the server does not
implement: neither unsupported_method nor not_a_server_error judges it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.open_answers import (
    broken_parameters,
    empty_and_open,
    inferred_400,
    names_the_status,
    page_400,
)
from evalmock.harness.checks.policy import Policy
from evalmock.harness.checks.registry import SCHEMATHESIS, Check, checks, find_check

# The built-in checks that judge a response against the document (and so may meet DigitalOcean's
# live parts).
DOCUMENT_CHECKS = (
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
)
# RFC 9110 9.1: a method the server does not recognize or implement at all (Schemathesis sends
# QUERY, a plain HTTP server knows no PUT) SHOULD get 501; 405 is for one it implements but not on
# this path. Every general-purpose server implements GET and HEAD. So a 501 to another method is
# HTTP's own answer, which these checks would fail.
NOT_IMPLEMENTED_CHECKS = ("unsupported_method", "not_a_server_error")
ALWAYS_IMPLEMENTED = ("GET", "HEAD")


def runs_under(check: Check, policy: Policy) -> bool:
    return policy.runs(check.source)


def builtin_check_names(api: str, policy: Policy) -> list[str]:
    """The Schemathesis built-ins to run on `api`: the declared ones whose level applies, and in the
    live profile every document check, whose breaches of the live parts count for LIVE_SPEC."""
    names = [
        c.name for c in checks(api, SCHEMATHESIS) if c is not LIVE_SPEC and runs_under(c, policy)
    ]
    if api == LIVE_SPEC.api and runs_under(LIVE_SPEC, policy):
        names += [name for name in DOCUMENT_CHECKS if name not in names]
    return names


def attribute(
    api: str,
    name: str,
    *,
    status: int | None,
    query: Mapping[str, Any] | None,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    targets: Targets | None = None,
) -> Check | None:
    """The check an outcome of built-in `name` counts for, or None when it is about nothing the
    pages (or the live spec) state: such as a negative request whose only fault is an undeclared or
    repeated parameter, or an undocumented status where the pages name no other (`headers`, when
    known, are the request's)."""
    outcome = BuiltinOutcome(api, name, status, query or {}, method, headers, targets or Targets())
    rule = RULES.get(name)
    return rule(outcome) if rule is not None else _registered(outcome)


@dataclass(frozen=True)
class BuiltinOutcome:
    """One outcome of a Schemathesis built-in check: which, on which API, and the exchange it
    judged."""

    api: str
    name: str
    status: int | None
    query: Mapping[str, Any]
    method: str
    headers: Mapping[str, str] | None
    targets: Targets


def _registered(outcome: BuiltinOutcome) -> Check | None:
    try:
        return find_check(outcome.name, outcome.api)
    except KeyError:
        return None


def _status_the_pages_name(outcome: BuiltinOutcome) -> Check | None:
    """An undocumented status counts only where a page sentence names what the request must get
    instead."""
    api, status = outcome.api, outcome.status
    if (
        api == "test-set"
        and status is not None
        and not _documented(api, status)
        and not names_the_status(
            api, outcome.method, outcome.query, outcome.headers, outcome.targets, status
        )
    ):
        return None
    return _registered(outcome)


def _live_document(outcome: BuiltinOutcome) -> Check | None:
    """On DigitalOcean's API a breach of the document's live parts counts for the live spec."""
    if outcome.api == LIVE_SPEC.api and (
        outcome.name == "response_headers_conformance"
        or (outcome.status is not None and _live_response(outcome.api, outcome.status))
    ):
        return LIVE_SPEC
    return _registered(outcome)


def _implemented_method(outcome: BuiltinOutcome) -> Check | None:
    """A 501 to a method other than GET and HEAD is HTTP's answer for a method the server does not
    implement."""
    if outcome.status == 501 and outcome.method.upper() not in ALWAYS_IMPLEMENTED:
        return None
    return _registered(outcome)


def _rejected_parameter(outcome: BuiltinOutcome) -> Check | None:
    """A negative request counts for the rule of the parameter it breaks: a page 400, an inferred
    one (the rule its parameter's `bad-value-rule` names, else the built-in's own), or none."""
    api = outcome.api
    broken = broken_parameters(api, outcome.query) - empty_and_open(api, outcome.query)
    if broken & set(page_400(api)):
        return find_check(outcome.name, api)
    inferred = broken & set(inferred_400(api))
    if inferred:
        return find_check(operation(api).bad_value_rule(inferred) or outcome.name, api)
    return None


# Per built-in, the rule deciding what its outcome counts for; any other counts for the check of its
# own name.
RULES: dict[str, Callable[[BuiltinOutcome], Check | None]] = {
    "status_code_conformance": _status_the_pages_name,
    **dict.fromkeys(DOCUMENT_CHECKS, _live_document),
    **dict.fromkeys(NOT_IMPLEMENTED_CHECKS, _implemented_method),
    "negative_data_rejection": _rejected_parameter,
}


def _documented(api: str, status: int) -> bool:
    return operation(api).response_for(status) is not None


def _live_response(api: str, status: int) -> bool:
    response = operation(api).response_for(status)
    return response is not None and response.live
