"""Who may call the admin API: with an admin token, a request that carries it; without one (a mock
on loopback), every caller of this machine but a web page of another origin. Connexion checks both
by the document's bearer scheme; Swagger UI's copy of the document asks for no token when none is
needed."""

from __future__ import annotations

import hmac
from typing import Any

from connexion.lifecycle import ConnexionRequest
from connexion.security import BearerSecurityHandler
from starlette.types import Scope

from evalmock import environment
from evalmock.server.auth import authorization
from evalmock.server.errors import ApiError

# What the served document says instead of a bearer scheme when the mock has no admin token.
OPEN_NOTE = (
    "This mock runs without an admin token: every request from this machine is let in, with no "
    "`Authorization` header (a web page of another origin gets 403 `forbidden`)."
)


def admin_security_map(admin_token: str | None) -> dict[str, type[BearerSecurityHandler]]:
    """The admin API's bearer scheme: with an admin token, every request must carry it (else 401);
    without one (a mock on a loopback address), every request is let in but a web page's of another
    origin (403)."""

    def check(request: ConnexionRequest) -> dict[str, Any]:
        if not admin_token:
            if _cross_origin(request.scope):
                raise ApiError(
                    403,
                    "forbidden",
                    "The admin API answers no web page of another origin (its Origin is not this "
                    "mock): call it from the test runner, or start the mock with --admin-token.",
                )
            return {"sub": "admin"}
        scheme, _, token = (authorization(request.scope) or "").strip().partition(" ")
        sent = token.strip(" ").encode("utf-8", "surrogateescape")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent, admin_token.encode()):
            raise ApiError(
                401,
                "unauthorized",
                "The admin API needs the mock's admin token (--admin-token, "
                f"{environment.ADMIN_TOKEN}): Authorization: Bearer <admin token>.",
            )
        return {"sub": "admin"}

    class AdminBearerHandler(BearerSecurityHandler):
        def _resolve_func(self, security_scheme: dict[str, Any]) -> Any:
            return check

        def _get_verify_func(self, function: Any) -> Any:
            return function

    return {"bearer": AdminBearerHandler}


def without_admin_token(spec: dict[str, Any]) -> dict[str, Any]:
    """The admin document as Swagger UI and `openapi.json` show it on a mock without an admin token:
    no security requirement and no bearer scheme (no lock, no Authorize button), and a description
    that says so. Connexion still checks the scheme (admin_security_map, which then lets the
    request in); the file under openapi/, which `evalmock validate` checks, keeps both."""
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
