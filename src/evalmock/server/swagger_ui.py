"""Swagger UI and the documents ({base}/ui/, {base}/openapi.json), served by Connexion's middleware
after routing.

Connexion puts its Swagger UI middleware before routing, so every API request first runs through the
UI's own router and misses it twice (once more for Starlette's trailing-slash redirect). Placed
after Connexion's routing, it looks only at requests that routing found no operation for; the UI's
paths are never an operation's, so every request ends where it did.
"""

from __future__ import annotations

from connexion.middleware.abstract import ROUTING_CONTEXT
from connexion.middleware.swagger_ui import SwaggerUIMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send


class SwaggerUIAfterRouting(SwaggerUIMiddleware):
    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        # The router of the documents' mounts would redirect a bare base path (/v1) to itself with a
        # slash added (/v1/), where nothing is served either: a 404 at once names the paths that are
        # (errors.py). Each document's own router still redirects (/v1/openapi.json/ to
        # /v1/openapi.json), and /v1/ui to /v1/ui/ is a route of its own.
        self.router.redirect_slashes = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        routing = (
            scope.get("extensions", {}).get(ROUTING_CONTEXT, {}) if scope["type"] == "http" else {}
        )
        if routing.get("operation_id") is not None:
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
