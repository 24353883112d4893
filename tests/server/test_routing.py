"""Routing by the documents: Connexion's own routes matched in one pass, passing on the scope its
router would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from connexion.middleware.routing import RoutingMiddleware

from evalmock.contract.documents import ADMIN
from evalmock.contract.operations import operations
from evalmock.server.app import create_app
from evalmock.server.routing import DocumentRoutingMiddleware, no_slash_redirects, route_table
from evalmock.server.settings import ServerSettings
from evalmock.server.swagger_ui import SwaggerUIAfterRouting

from .helpers import AUTH, FrozenClock, cases_path, evaluation_path, example_params

# Operations (matched in one pass) and everything Connexion's router answers itself: a method an
# operation does not take, a slash added (404: not redirected), a line break its mount does not
# match, Swagger UI, none.
REQUESTS = [
    ("GET", cases_path(), example_params()),
    ("HEAD", cases_path(), example_params()),
    ("GET", cases_path("a.b-c_d"), example_params(limit=3)),
    ("GET", evaluation_path(), {}),
    ("GET", evaluation_path("not a uuid"), {"evaluation_test_case_version": 2}),
    ("POST", cases_path(), example_params()),
    ("GET", cases_path() + "/", example_params()),
    ("GET", "/v1/agents/a%0Ab/test-set/cases", example_params()),
    ("GET", "/v1/agents/a%2Fb/test-set/cases", example_params()),
    ("GET", "/v2/gen-ai/evaluation_test_cases/a/b", {}),
    ("GET", "/v1/ui/", {}),
    ("GET", "/v2/openapi.json", {}),
    ("GET", "/v1", {}),
    ("GET", "/nothing", {}),
]
_COUNTED = {"ratelimit-remaining"}


@pytest.fixture
def routed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """What each request's scope holds when routing hands it on (routing's own keys only)."""
    seen: list[dict[str, Any]] = []
    original = SwaggerUIAfterRouting.__call__

    async def record(self: SwaggerUIAfterRouting, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(
                {
                    "path_params": scope.get("path_params"),
                    "extensions": scope.get("extensions"),
                    "keys": sorted(scope),
                }
            )
        await original(self, scope, receive, send)

    monkeypatch.setattr(SwaggerUIAfterRouting, "__call__", record)
    yield seen


def _client() -> httpx.Client:
    app = create_app(ServerSettings(seed=42, cases=60), clock=FrozenClock())
    return app.test_client(raise_server_exceptions=False)  # its lifespan runs within `with`


def _answers() -> list[tuple[int, list[tuple[str, str]], bytes]]:
    """What a fresh app answers to REQUESTS; its client is closed after."""
    with _client() as client:
        return _answers_of(client)


def _answers_of(client: httpx.Client) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    answers = []
    for method, path, query in REQUESTS:
        response = client.request(
            method,
            path,
            params=query,
            headers={**AUTH, "X-Request-Id": "routing"},
            follow_redirects=False,
        )
        headers = sorted((k, v) for k, v in response.headers.multi_items() if k not in _COUNTED)
        answers.append((response.status_code, headers, response.content))
    return answers


def test_the_route_table_holds_every_operation_of_both_documents() -> None:
    with _client() as client:
        stack = client.app.middleware.middleware_stack  # type: ignore[attr-defined]
        routing = next(app for app in stack if isinstance(app, DocumentRoutingMiddleware))
        table = route_table(routing.router)
        assert table is not None, (
            "the routes Connexion built are not in the shape read: every request is slow"
        )
        # the two pages' APIs, and the admin API (on for a mock on loopback)
        assert {document.base_path for document in table} == {"/v1", "/v2", ADMIN.base_path}
        admin_operations = {
            operation["operationId"]
            for path in ADMIN.spec["paths"].values()
            for operation in path.values()
            if isinstance(operation, dict) and "operationId" in operation
        }
        assert {op.operation_id for document in table for op in document.operations} == (
            set(operations()) | admin_operations
        )


def test_each_request_is_answered_and_handed_on_as_by_connexions_router(
    routed: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _answers()
    fast_scopes = list(routed)
    routed.clear()

    def connexions_add_api(self: RoutingMiddleware, *args: Any, **kwargs: Any) -> None:
        RoutingMiddleware.add_api(self, *args, **kwargs)
        no_slash_redirects(self.router)

    with monkeypatch.context() as patch:
        patch.setattr(DocumentRoutingMiddleware, "add_api", connexions_add_api)
        connexions = _answers()
    assert fast == connexions
    assert fast_scopes == routed
    routing = {"api_base_path": "/v1", "operation_id": "listTestSetCases"}
    assert fast_scopes[0]["extensions"]["connexion_routing"] == routing
    assert fast_scopes[0]["path_params"] == {"agentId": "example"}
    assert [answer[0] for answer in fast] == [
        200,
        200,
        404,
        200,
        404,
        405,
        404,
        400,
        404,
        404,
        200,
        200,
        404,
        404,
    ]


def test_a_request_for_an_operation_does_not_go_through_connexions_router(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    original = RoutingMiddleware.__call__

    async def counted(self: RoutingMiddleware, scope: Any, receive: Any, send: Any) -> None:
        calls.append(scope["path"])
        await original(self, scope, receive, send)

    with _client() as client:  # its lifespan run first, uncounted
        monkeypatch.setattr(RoutingMiddleware, "__call__", counted)
        assert client.get(cases_path(), params=example_params(), headers=AUTH).status_code == 200
        assert client.get(evaluation_path(), headers=AUTH).status_code == 200
        assert calls == []
        slash_added = client.get(
            cases_path() + "/", params=example_params(), headers=AUTH, follow_redirects=False
        )
        assert slash_added.status_code == 404
        assert calls == [cases_path() + "/"]
