"""Hand-made exchanges for unit tests of the checks: conforming pages and errors, and ways to break
them."""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import urlencode

from evalmock.harness.checks.exchange import Exchange

PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
LIST_PATH = "/v1/agents/acme.drafting/test-set/cases"
TEST_CASE = "123e4567-e89b-12d3-a456-426614174000"
RATELIMIT = {
    "ratelimit-limit": "5000",
    "ratelimit-remaining": "4999",
    "ratelimit-reset": "1767225600",
}


def hand_case(**changes: Any) -> dict[str, Any]:
    case = {
        "id": "case-7f3a9c21",
        "kind": "hand",
        "projectId": PROJECT,
        "runId": "run-5b1e0d7c",
        "madeOn": "acme.drafting@2026.11.3",
        "expect": {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [{"tool": "search", "args": {"q": "DE"}}],
            },
            "answer": {"verdict": "wrong", "shouldSay": "Cite the clause."},
        },
        "addedBy": {"kind": "user", "id": "user-1042"},
        "addedAt": "2026-11-20T09:15:02Z",
        "updatedAt": "2026-11-20T09:15:02Z",
        "expert": True,
    }
    case.update(changes)
    return case


def correction_case(**changes: Any) -> dict[str, Any]:
    case = {
        "id": "corr-0c44e2aa",
        "kind": "correction",
        "projectId": PROJECT,
        "runId": "run-19ac03f2",
        "madeOn": "acme.drafting@2026.11.1",
        "expect": {
            "items": [
                {"key": "case-1", "pointer": "/matches/0", "rank": 0, "verdict": "right"},
                {"key": "case-2", "pointer": "/matches/1", "rank": 1, "verdict": "wrong"},
            ]
        },
        "addedBy": {"kind": "service", "id": "svc-ingest"},
        "addedAt": "2026-11-18T16:40:00Z",
        "updatedAt": "2026-11-18T16:40:00+00:00",
    }
    case.update(changes)
    return case


def retired_case(**changes: Any) -> dict[str, Any]:
    case = hand_case(
        id="case-a19d0e55",
        addedAt="2026-10-02T11:00:00Z",
        updatedAt="2026-10-30T08:12:45Z",
        retired={
            "reason": "Superseded.",
            "by": {"kind": "user", "id": "user-7"},
            "at": "2026-10-30T08:12:45Z",
        },
    )
    case.update(changes)
    return case


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
    test_case = {
        "test_case_uuid": TEST_CASE,
        "name": "example name",
        "version": 3,
        "created_by_user_id": "12345",
        "updated_by_user_id": "12345",
        "dataset": {"dataset_name": "example name", "file_size": "12345", "row_count": 123},
    }
    test_case.update(changes)
    return test_case


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


def changed(value: dict[str, Any], path: str, new: Any) -> dict[str, Any]:
    """A deep copy of `value` with the dotted `path` set to `new` (or removed when `new` is ...)."""
    result = copy.deepcopy(value)
    target = result
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if new is ...:
        del target[keys[-1]]
    else:
        target[keys[-1]] = new
    return result
