"""HAR files written by hand, as a browser saves them: entries of both APIs with their credentials,
and entries of other hosts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STAGING = "https://staging.example.com"


def entry(
    url: str,
    status: int,
    body: Any,
    *,
    headers: dict[str, str] | None = None,
    response_headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One HAR entry of a GET and its JSON answer (`body` a string is sent as it is)."""
    return {
        "startedDateTime": "2026-12-01T10:00:00.000Z",
        "time": 12,
        "request": {
            "method": "GET",
            "url": url,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
            "cookies": [],
            "queryString": [],
            "headersSize": -1,
            "bodySize": 0,
        },
        "response": {
            "status": status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k, "value": v} for k, v in (response_headers or {}).items()],
            "cookies": [],
            "content": {
                "size": 0,
                "mimeType": "application/json",
                "text": body if isinstance(body, str) else json.dumps(body),
            },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 12, "receive": 0},
    }


def har(path: Path, entries: list[dict[str, Any]]) -> Path:
    document = {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}}}
    document["log"]["entries"] = entries
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def page(cases: list[dict[str, Any]], next_cursor: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"data": cases, "hasMore": next_cursor is not None}
    if next_cursor is not None:
        body["nextCursor"] = next_cursor
    return body


def list_url(agent: str, project: str, query: str = "") -> str:
    return f"{STAGING}/v1/agents/{agent}/test-set/cases?projectId={project}{query}"


def evaluation_url(uuid: str, version: int | None = None) -> str:
    query = "" if version is None else f"?evaluation_test_case_version={version}"
    return f"{STAGING}/v2/gen-ai/evaluation_test_cases/{uuid}{query}"
