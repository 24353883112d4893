"""Which registered check an outcome of Schemathesis's built-in checks counts for, so that each is judged at the
level of the rule it is about (a built-in check knows the document, not which part of it the page states)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.schemas import schema_validator
from evalmock.harness.checks.builtins import LIVE_SPEC
from evalmock.harness.checks.parameters import INFERRED_400, PAGE_400, limit_outside_its_bounds_is_bad_input
from evalmock.harness.checks.registry import SCHEMATHESIS, Check, checks, find_check
from evalmock.harness.policy import Policy

# The built-in checks that judge a response against the document (and so may meet DigitalOcean's live parts).
DOCUMENT_CHECKS = ("content_type_conformance", "response_schema_conformance", "response_headers_conformance")


def runs_under(check: Check, policy: Policy) -> bool:
    return policy.applies(check.level)


def builtin_check_names(api: str, policy: Policy) -> list[str]:
    """The Schemathesis built-ins to run on `api`: the declared ones whose level applies, and in the live profile
    every document check, whose breaches of the live parts count for LIVE_SPEC."""
    names = [c.name for c in checks(api, SCHEMATHESIS) if c is not LIVE_SPEC and runs_under(c, policy)]
    if api == LIVE_SPEC.api and runs_under(LIVE_SPEC, policy):
        names += [name for name in DOCUMENT_CHECKS if name not in names]
    return names


def attribute(api: str, name: str, *, status: int | None, query: Mapping[str, Any] | None) -> Check | None:
    """The check an outcome of built-in `name` counts for, or None when it is about nothing the pages (or the
    live spec) state: such as a negative request whose only fault is an undeclared or repeated parameter."""
    if api == LIVE_SPEC.api and name in DOCUMENT_CHECKS and (
        name == "response_headers_conformance" or (status is not None and _live_response(api, status))
    ):
        return LIVE_SPEC
    if name == "negative_data_rejection":
        broken = broken_parameters(api, query or {})
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
    for name, (required, validator, kind) in _query_parameters(api).items():
        if name not in query:
            if required:
                broken.add(name)
            continue
        values = query[name] if isinstance(query[name], list) else [query[name]]
        if any(not _valid(validator, kind, value) for value in values):
            broken.add(name)
    return broken


def undeclared_parameters(api: str, query: Mapping[str, Any]) -> set[str]:
    """The query parameters of `query` that the document does not declare."""
    return set(query) - set(_query_parameters(api))


def _valid(validator: Any, kind: str | None, value: Any) -> bool:
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


def _live_response(api: str, status: int) -> bool:
    response = operation(api).response_for(status)
    return response is not None and response.live
