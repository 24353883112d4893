"""Which registered check an outcome of Schemathesis's built-in checks counts for, so that each is judged at the
level of the rule it is about (a built-in check knows the document, not which part of it the page states).

An answer whose status the document does not list breaks `status_code_conformance` (page) only where a page
sentence names what the request must get instead: no bearer token, or an expired or revoked one (401), a
projectId, include or kind outside its stated form (400), a cursor given to a runtime that seals them (the page or
400 bad-input). Anywhere else the pages leave the status open (a caller without read, a method they do not
document, a request too large, throttling), and it is not judged. A 501 to a method other than GET and HEAD is
HTTP's answer for a method the server does not implement: neither unsupported_method nor not_a_server_error
judges it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.schemas import schema_validator
from evalmock.contract.targets import Targets
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.parameters import INFERRED_400, PAGE_400, limit_outside_its_bounds_is_bad_input
from evalmock.harness.checks.registry import SCHEMATHESIS, Check, checks, find_check
from evalmock.harness.policy import Policy

# The built-in checks that judge a response against the document (and so may meet DigitalOcean's live parts).
DOCUMENT_CHECKS = ("content_type_conformance", "response_schema_conformance", "response_headers_conformance")
# Statuses a service may answer before it reads the request at all: a request too large (413, 414, 431) or too
# many requests (429). No page sentence rules them out, so they are open whatever the request.
OPEN_STATUSES = frozenset({413, 414, 429, 431})
# Parameters whose empty value (`include=`, `kind=`) the pages leave open: read as left out, or refused with 400.
OPEN_WHEN_EMPTY = {"test-set": ("include", "kind")}
# RFC 9110 9.1: a method the server does not recognize or implement at all (Schemathesis sends QUERY, a plain HTTP
# server knows no PUT) SHOULD get 501; 405 is for one it implements but not on this path. Every general-purpose
# server implements GET and HEAD. So a 501 to another method is HTTP's own answer, which these checks would fail.
NOT_IMPLEMENTED_CHECKS = ("unsupported_method", "not_a_server_error")
ALWAYS_IMPLEMENTED = ("GET", "HEAD")


def runs_under(check: Check, policy: Policy) -> bool:
    return policy.runs(check.source)


def builtin_check_names(api: str, policy: Policy) -> list[str]:
    """The Schemathesis built-ins to run on `api`: the declared ones whose level applies, and in the live profile
    every document check, whose breaches of the live parts count for LIVE_SPEC."""
    names = [c.name for c in checks(api, SCHEMATHESIS) if c is not LIVE_SPEC and runs_under(c, policy)]
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
    """The check an outcome of built-in `name` counts for, or None when it is about nothing the pages (or the
    live spec) state: such as a negative request whose only fault is an undeclared or repeated parameter, or an
    undocumented status where the pages name no other (`headers`, when known, are the request's)."""
    if name == "status_code_conformance" and api == "test-set" and status is not None and not _documented(
        api, status
    ) and not names_the_status(api, method, query or {}, headers, targets or Targets(), status):
        return None
    if api == LIVE_SPEC.api and name in DOCUMENT_CHECKS and (
        name == "response_headers_conformance" or (status is not None and _live_response(api, status))
    ):
        return LIVE_SPEC
    if name in NOT_IMPLEMENTED_CHECKS and status == 501 and method.upper() not in ALWAYS_IMPLEMENTED:
        return None
    if name == "negative_data_rejection":
        broken = broken_parameters(api, query or {}) - empty_and_open(api, query or {})
        if broken & set(PAGE_400.get(api, ())):
            return find_check(name, api)
        if broken & set(INFERRED_400.get(api, ())):
            if api == "test-set":
                return find_check(limit_outside_its_bounds_is_bad_input.__name__, api)
            return find_check(name, api)
        return None
    try:
        return find_check(name, api)
    except KeyError:
        return None


def broken_parameters(api: str, query: Mapping[str, Any]) -> set[str]:
    """The declared query parameters that `query` leaves out although required, or gives a value that breaks
    their schema (values as sent: text, a number, or a list of either for a repeated parameter)."""
    broken = set()
    for name, (required, _, _) in _query_parameters(api).items():
        if name not in query:
            if required:
                broken.add(name)
            continue
        values = query[name] if isinstance(query[name], list) else [query[name]]
        if any(not _valid(api, name, value) for value in values):
            broken.add(name)
    return broken


def empty_and_open(api: str, query: Mapping[str, Any]) -> set[str]:
    """The parameters of `query` sent empty (`include=`) whose empty value the pages leave open."""
    return {name for name in OPEN_WHEN_EMPTY.get(api, ()) if query.get(name) in ("", [""])}


def names_the_status(
    api: str, method: str, query: Mapping[str, Any], headers: Mapping[str, str] | None, targets: Targets, status: int,
) -> bool:
    """Whether a page sentence names what this request of the test-set GET must get, so that another status breaks
    it: no bearer token (no Authorization, another scheme, an empty token), or one the targets say expired or was
    revoked (401: "Missing / malformed / expired / revoked bearer token."); projectId, include or kind outside its
    stated form (400); a cursor (not sent empty), when the runtime seals them (a page, or 400 bad-input). Statuses
    answered before the request is read are open whatever it is."""
    if api != "test-set" or method.upper() not in ("GET", "HEAD") or status in OPEN_STATUSES:
        return False
    if headers is not None:
        authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        scheme, _, token = (authorization or "").strip().partition(" ")
        # A token's own form is not judged here: recorded traffic carries a placeholder in its place.
        if scheme.lower() != "bearer" or not token.strip():
            return True
        if token.strip() in {targets.expired_token, targets.revoked_token} - {None}:
            return True
    if (broken_parameters(api, query) - empty_and_open(api, query)) & set(PAGE_400.get(api, ())):
        return True
    return carries_a_cursor(query) and targets.sealed_cursors is True


def carries_a_cursor(query: Mapping[str, Any]) -> bool:
    """Whether a request sends a cursor. `cursor=` sent empty is none: the page's "Absent → first page" does not say
    whether an empty one is absent, so what it gets is left open, as for an empty include or kind."""
    value = query.get("cursor")
    return any(item not in (None, "") for item in (value if isinstance(value, list) else [value]))


def refusal_left_open(
    api: str, status: int | None, query: Mapping[str, Any], path_parameters: Mapping[str, Any], targets: Targets,
) -> bool:
    """Whether a 400 or 404 to a request the document allows is one the pages allow: the request carries a cursor,
    even an empty one (the runtime may not take it), or names an agent and project the targets do not list (what an
    unknown agent, or a project that is not the agent's, gets is the service's). A request that names a listed
    project and no cursor must get its page."""
    if api != "test-set" or status not in (400, 404):
        return False
    if "cursor" in query:
        return True
    project = query.get("projectId")
    project = project[0] if isinstance(project, list) and project else project
    agent = path_parameters.get("agentId")
    return not any(p.agent_id == agent and str(project).lower() == p.project_id.lower() for p in targets.projects)


def undeclared_parameters(api: str, query: Mapping[str, Any]) -> set[str]:
    """The query parameters of `query` that the document does not declare."""
    return set(query) - set(_query_parameters(api))


def _valid(api: str, name: str, value: Any) -> bool:
    if isinstance(value, (str, int, float)):  # what a query holds as sent (a generated one may hold anything)
        return _valid_text_or_number(api, name, value)
    return _value_fits(api, name, value)


@functools.lru_cache(maxsize=4096, typed=True)  # clients send the same values again and again (typed: True is not 1)
def _valid_text_or_number(api: str, name: str, value: str | int | float) -> bool:
    return _value_fits(api, name, value)


def _value_fits(api: str, name: str, value: Any) -> bool:
    _, validator, kind = _query_parameters(api)[name]
    if kind in ("integer", "number") and isinstance(value, str):
        try:
            value = int(value) if kind == "integer" else float(value)
        except ValueError:
            return False
    return validator.is_valid(value)


@functools.cache
def _query_parameters(api: str) -> dict[str, tuple[bool, Any, str | None]]:
    spec = api_document(api).spec
    return {
        name: (bool(p.get("required")), schema_validator(spec, p["schema"]), p["schema"].get("type"))
        for name, p in operation(api).query_parameters().items()
    }


def _documented(api: str, status: int) -> bool:
    return operation(api).response_for(status) is not None


def _live_response(api: str, status: int) -> bool:
    response = operation(api).response_for(status)
    return response is not None and response.live
