"""Swagger UI and the documents ({base}/ui/, {base}/openapi.json), served by Connexion's middleware after routing.

Connexion puts its Swagger UI middleware before routing, so every API request first runs through the UI's
own router and misses it twice (once more for Starlette's trailing-slash redirect). Placed after
Connexion's routing, it looks only at requests that routing found no operation for; the UI's paths are
never an operation's, so every request ends where it did.
"""

from __future__ import annotations

from connexion.middleware.abstract import ROUTING_CONTEXT
from connexion.middleware.swagger_ui import SwaggerUIMiddleware
from starlette.types import Receive, Scope, Send


class SwaggerUIAfterRouting(SwaggerUIMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        routing = scope.get("extensions", {}).get(ROUTING_CONTEXT, {}) if scope["type"] == "http" else {}
        if routing.get("operation_id") is not None:
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
