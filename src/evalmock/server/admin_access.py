"""Who may call the admin API: with an admin token, a request that carries it (Connexion's security,
by the document's bearer scheme); without one, a mock on loopback lets in every caller of this
machine but a web page of another origin, and serves a document that asks for no token."""

from __future__ import annotations

import hmac
from typing import Any

from connexion.lifecycle import ConnexionRequest
from connexion.middleware.abstract import ROUTING_CONTEXT
from connexion.security import BearerSecurityHandler
from starlette.types import ASGIApp, Receive, Scope, Send

from evalmock.contract.documents import ADMIN
from evalmock.server.auth import authorization
from evalmock.server.errors import ApiError

# What the served document says instead of a bearer scheme when the mock has no admin token.
OPEN_NOTE = (
    "This mock runs without an admin token: every request from this machine is let in, with no "
    "`Authorization` header (a web page of another origin gets 403 `forbidden`)."
)


def admin_security_map(admin_token: str) -> dict[str, type[BearerSecurityHandler]]:
    """The admin API's bearer scheme: every request must carry the admin token, else 401."""

    def check(request: ConnexionRequest) -> dict[str, Any]:
        scheme, _, token = (authorization(request.scope) or "").strip().partition(" ")
        sent = token.strip(" ").encode("utf-8", "surrogateescape")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent, admin_token.encode()):
            raise ApiError(
                401,
                "unauthorized",
                "The admin API needs the mock's admin token (--admin-token, EVALMOCK_ADMIN_TOKEN): "
                "Authorization: Bearer <admin token>.",
            )
        return {"sub": "admin"}

    class AdminBearerHandler(BearerSecurityHandler):
        def _resolve_func(self, security_scheme: dict[str, Any]) -> Any:
            return check

        def _get_verify_func(self, function: Any) -> Any:
            return function

    return {"bearer": AdminBearerHandler}


def without_admin_token(spec: dict[str, Any]) -> dict[str, Any]:
    """The served admin document of a mock without an admin token: no security requirement and no
    bearer scheme (Swagger UI then shows no lock and no Authorize button), and a description that
    says so. The file under openapi/, which `evalmock validate` checks, keeps both."""
    spec.pop("security", None)
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                operation.pop("security", None)
    components = spec.get("components", {})
    components.pop("securitySchemes", None)
    info = spec.setdefault("info", {})
    info["description"] = f"{OPEN_NOTE}\n\n{info.get('description', '')}".rstrip() + "\n"
    return spec


def _cross_origin(scope: Scope) -> bool:
    """Whether a browser sent the request from a page of another origin: an `Origin` whose host
    and port are not the request's `Host` (a test runner sends no Origin)."""
    headers = dict(scope["headers"])
    origin = headers.get(b"origin")
    if origin is None:
        return False
    return origin.split(b"://", 1)[-1].lower() != headers.get(b"host", b"").lower()


class AdminOriginGuard:
    """On a mock without an admin token, an admin operation asked by a web page of another origin
    gets 403 forbidden, so that no page a developer visits can drive the mock on their machine.
    After routing (it reads which API the request was routed to), inside the error handlers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.base_path = ADMIN.base_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._to_admin(scope) and _cross_origin(scope):
            raise ApiError(
                403,
                "forbidden",
                "The admin API answers no web page of another origin (its Origin is not this "
                "mock): call it from the test runner, or start the mock with --admin-token.",
            )
        await self.app(scope, receive, send)

    def _to_admin(self, scope: Scope) -> bool:
        """Whether routing found an operation of the admin API for the request."""
        routing = scope.get("extensions", {}).get(ROUTING_CONTEXT, {})
        return routing.get("api_base_path") == self.base_path and bool(routing.get("operation_id"))
