"""What the pages leave open about a request: the parameters it breaks or adds, an empty value, a
cursor, and whether a page sentence names the status it must get."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.schemas import schema_validator
from evalmock.contract.targets import Targets


@functools.cache
def page_400(api: str) -> tuple[str, ...]:
    """The parameters whose malformed values the page's 400 sentence names (the document says)."""
    return operation(api).query_marked("bad-value", "page")


@functools.cache
def inferred_400(api: str) -> tuple[str, ...]:
    """The parameters whose malformed values the pages do not name, but bound: an inferred 400."""
    return operation(api).query_marked("bad-value", "inferred")


@functools.cache
def open_when_empty(api: str) -> tuple[str, ...]:
    """Parameters whose empty value (`include=`) the pages leave open: read as left out, or refused
    with 400."""
    return operation(api).query_marked("empty-value", "open")


# Statuses a service may answer before it reads the request at all: a request too large (413, 414,
# 431) or too many requests (429). No page sentence rules them out, so they are open whatever the
# request.
OPEN_STATUSES = frozenset({413, 414, 429, 431})


def broken_parameters(api: str, query: Mapping[str, Any]) -> set[str]:
    """The declared query parameters that `query` leaves out although required, or gives a value
    that breaks their schema (values as sent: text, a number, or a list of either for a repeated
    parameter)."""
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
    return {name for name in open_when_empty(api) if query.get(name) in ("", [""])}


def names_the_status(
    api: str,
    method: str,
    query: Mapping[str, Any],
    headers: Mapping[str, str] | None,
    targets: Targets,
    status: int,
) -> bool:
    """Whether a page sentence names what this request of the test-set GET must get, so that another
    status breaks it: no bearer token (no Authorization, another scheme, an empty token), or one the
    targets say expired or was revoked (401: "Missing / malformed / expired / revoked bearer
    token."); projectId, include or kind outside its stated form (400); a cursor (not sent empty),
    when the runtime seals them (a page, or 400 bad-input). Statuses answered before the request is
    read are open whatever it is."""
    if api != "test-set" or method.upper() not in ("GET", "HEAD") or status in OPEN_STATUSES:
        return False
    if headers is not None:
        authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        scheme, _, token = (authorization or "").strip().partition(" ")
        # A token's own form is not judged here: recorded traffic carries a placeholder in its
        # place.
        if scheme.lower() != "bearer" or not token.strip():
            return True
        if token.strip() in {targets.expired_token, targets.revoked_token} - {None}:
            return True
    if (broken_parameters(api, query) - empty_and_open(api, query)) & set(page_400(api)):
        return True
    return carries_a_cursor(query) and targets.sealed_cursors is True


def carries_a_cursor(query: Mapping[str, Any]) -> bool:
    """Whether a request sends a cursor. `cursor=` sent empty is none: the page's "Absent → first
    page" does not say whether an empty one is absent, so what it gets is left open, as for an empty
    include or kind."""
    value = query.get("cursor")
    return any(item not in (None, "") for item in (value if isinstance(value, list) else [value]))


def refusal_left_open(
    api: str,
    status: int | None,
    query: Mapping[str, Any],
    path_parameters: Mapping[str, Any],
    targets: Targets,
) -> bool:
    """Whether a 400 or 404 to a request the document allows is one the pages allow: the request
    carries a cursor, even an empty one (the runtime may not take it), or names an agent and project
    the targets do not list (what an unknown agent, or a project that is not the agent's, gets is
    the service's). A request that names a listed project and no cursor must get its page."""
    if api != "test-set" or status not in (400, 404):
        return False
    if "cursor" in query:
        return True
    project = query.get("projectId")
    project = project[0] if isinstance(project, list) and project else project
    agent = path_parameters.get("agentId")
    return not any(
        p.agent_id == agent and str(project).lower() == p.project_id.lower()
        for p in targets.projects
    )


def undeclared_parameters(api: str, query: Mapping[str, Any]) -> set[str]:
    """The query parameters of `query` that the document does not declare."""
    return set(query) - set(_query_parameters(api))


def _valid(api: str, name: str, value: Any) -> bool:
    # what a query holds as sent (a generated one may hold anything)
    if isinstance(value, (str, int, float)):
        return _valid_text_or_number(api, name, value)
    return _value_fits(api, name, value)


# clients send the same values again and again (typed: True is not 1)
@functools.lru_cache(maxsize=4096, typed=True)
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
        name: (
            bool(p.get("required")),
            schema_validator(spec, p["schema"]),
            p["schema"].get("type"),
        )
        for name, p in operation(api).query_parameters().items()
    }
