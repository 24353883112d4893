"""Faults: a queued fault checked against the API's document when it is queued, and answered with
the body `Prefer: code=N` gets (prefer.py builds it; nothing here writes a body), a 401's message
naming the fault."""

from __future__ import annotations

import secrets
from typing import Any

from evalmock.contract.operations import Operation, operation
from evalmock.contract.statuses import body_code, documented, error_statuses
from evalmock.server.errors import ApiError
from evalmock.server.prefer import forced_error
from evalmock.server.sessions.records import Fault


def _mistake(path: str, message: str) -> ApiError:
    return ApiError(
        400, "bad-input", f"The fault is not valid: {message}", [{"path": path, "message": message}]
    )


def fault_statuses(api: str) -> dict[int, tuple[str, ...]]:
    """Each error status the API's document lists (the live service's too, as `Prefer` takes
    them), with the codes its examples name."""
    op = operation(api)
    listed: dict[int, tuple[str, ...]] = {}
    for status in error_statuses(api, live=True):
        found = documented(api)[status]
        response = op.response_for(status)
        bodies = response.examples.values() if response else ()
        codes = [code for body in bodies if (code := body_code(api, body)) is not None]
        if found.code is not None:
            codes.insert(0, found.code)
        listed[status] = tuple(dict.fromkeys(codes))
    return listed


def new_fault(settings: dict[str, Any]) -> Fault:
    """The fault a `FaultSettings` body the admin document validated (its bounds, `times`'s among
    them) asks for; ApiError 400 naming the JSON path of a status, code or Retry-After the API's
    document does not have."""
    api = settings["api"]
    status = settings.get("status")
    code = settings.get("code")
    retry_after = settings.get("retryAfter")
    if status is None and settings.get("latencyMs") is None:
        raise _mistake("$", "give a status, a latencyMs, or both")
    if status is None and (code is not None or retry_after is not None):
        raise _mistake("$.status", "code and retryAfter need a status")
    if status is not None:
        statuses = fault_statuses(api)
        if status not in statuses:
            listed = ", ".join(map(str, statuses))
            raise _mistake("$.status", f"{api} documents the error statuses {listed}, not {status}")
        codes = statuses[status]
        if code is not None and code not in codes:
            named = ", ".join(codes) or "none"
            raise _mistake("$.code", f"the {status} of {api} documents the codes {named}")
        if retry_after is not None and not documented(api)[status].retry_after:
            raise _mistake("$.retryAfter", f"the {status} of {api} has no Retry-After header")
    times = settings.get("times", 1)
    match = settings.get("match") or {}
    return Fault(
        id="flt_" + secrets.token_hex(6),
        api=api,
        times=times,
        remaining=times,
        status=status,
        code=code,
        retry_after=retry_after,
        latency_ms=settings.get("latencyMs"),
        match_query=tuple((name, value) for name, value in (match.get("query") or {}).items()),
        match_page=match.get("page"),
    )


def _example_naming(op: Operation, status: int, code: str) -> str | None:
    response = op.response_for(status)
    for name, body in (response.examples if response else {}).items():
        if body_code(op.api, body) == code:
            return name
    return None


def queued_401_message(fault_id: str) -> str:
    """A 401 fault's message: the app sent a session's valid token, so the message says the test
    queued this 401 (and names no demo token, which would send its reader the wrong way)."""
    return (
        f"A 401 queued for this session's next request (fault {fault_id}): the app should act as "
        "if its token were refused."
    )


def fault_error(op: Operation, fault: Fault, path_params: dict[str, Any]) -> ApiError:
    """The answer of a fault with a status: what `Prefer: code=N` (with the example naming the
    fault's code) answers, with the fault's Retry-After, and a 401's message naming the fault."""
    assert fault.status is not None
    example = None if fault.code is None else _example_naming(op, fault.status, fault.code)
    error = forced_error(op, fault.status, example, path_params)
    if fault.status == 401:
        error.message = queued_401_message(fault.id)
    if fault.retry_after is not None:
        error.headers = {**error.headers, "Retry-After": str(fault.retry_after)}
        if isinstance(error.details, dict) and "retryAfterSeconds" in error.details:
            error.details = {**error.details, "retryAfterSeconds": fault.retry_after}
    return error
