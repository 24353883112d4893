"""Hand-made exchanges for unit tests of the checks: conforming pages and errors, and ways to break
them."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from evalmock.harness.checks.exchange import Exchange
from valid import changed as changed  # the harness tests import it from here
from valid import valid_case, valid_retired_case, valid_version

PROJECT = valid_case()["projectId"]
LIST_PATH = "/v1/agents/acme.drafting/test-set/cases"
TEST_CASE = valid_version()["test_case_uuid"]
RATELIMIT = {
    "ratelimit-limit": "5000",
    "ratelimit-remaining": "4999",
    "ratelimit-reset": "1767225600",
}


def hand_case(**changes: Any) -> dict[str, Any]:
    return valid_case("hand", **changes)


def correction_case(**changes: Any) -> dict[str, Any]:
    return valid_case("correction", **changes)


def retired_case(**changes: Any) -> dict[str, Any]:
    return valid_retired_case(**changes)


def page(
    cases: list[dict[str, Any]] | None = None,
    *,
    has_more: bool = False,
    next_cursor: str | None = None,
    extra: dict[str, Any] | None = None,
    **query: Any,
) -> Exchange:
    """A 200 page of listTestSetCases, for a request with `query` (projectId defaults to
    PROJECT)."""
    cases = [hand_case(), correction_case()] if cases is None else cases
    body: dict[str, Any] = {"data": cases, "hasMore": has_more}
    if next_cursor is not None:
        body["nextCursor"] = next_cursor
    body.update(extra or {})
    params = {"projectId": PROJECT, **query}
    return Exchange(
        method="GET",
        url=f"http://127.0.0.1:8080{LIST_PATH}?{urlencode(params)}",
        status=200,
        headers={"content-type": "application/json", "x-request-id": "rid-1"},
        body=json.dumps(body).encode(),
    )


def error(
    status: int,
    code: str,
    *,
    request_id: str = "rid-1",
    header: str | None = "rid-1",
    path: str = LIST_PATH,
    headers: dict[str, str] | None = None,
    body: Any = None,
    content_type: str = "application/json",
    query: str = f"projectId={PROJECT}",
) -> Exchange:
    """A test-set error answer with the envelope (or `body` instead), to a request with `query`."""
    if body is None:
        body = {
            "error": {
                "code": code,
                "message": "It went wrong.",
                "details": {},
                "requestId": request_id,
            }
        }
    sent = {
        "content-type": content_type,
        **({"x-request-id": header} if header is not None else {}),
    }
    sent.update(headers or {})
    return Exchange(
        method="GET",
        url=f"http://127.0.0.1:8080{path}?{query}",
        status=status,
        headers=sent,
        body=json.dumps(body).encode(),
    )


def evaluation_answer(
    test_case: dict[str, Any] | None = None,
    *,
    version: int | None = None,
    uuid: str = TEST_CASE,
    headers: dict[str, str] | None = None,
) -> Exchange:
    body = {"evaluation_test_case": test_case if test_case is not None else gradient_test_case()}
    query = f"?evaluation_test_case_version={version}" if version is not None else ""
    return Exchange(
        method="GET",
        url=f"http://127.0.0.1:8080/v2/gen-ai/evaluation_test_cases/{uuid}{query}",
        status=200,
        headers={"content-type": "application/json", **(RATELIMIT if headers is None else headers)},
        body=json.dumps(body).encode(),
    )


def gradient_test_case(**changes: Any) -> dict[str, Any]:
    return valid_version(**changes)


def gradient_error(
    status: int,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> Exchange:
    if body is None:
        body = {"id": "not_found", "message": "The resource you were accessing could not be found."}
    return Exchange(
        method="GET",
        url=f"http://127.0.0.1:8080/v2/gen-ai/evaluation_test_cases/{TEST_CASE}",
        status=status,
        headers={"content-type": content_type, **(RATELIMIT if headers is None else headers)},
        body=json.dumps(body).encode(),
    )
