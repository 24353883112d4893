"""Swagger UI and the documents ({base}/ui/, {base}/openapi.json), served by Connexion's middleware
after routing.

Connexion puts its Swagger UI middleware before routing, so every API request first runs through the
UI's own router and misses it twice (once more for Starlette's trailing-slash redirect). Placed
after Connexion's routing, it looks only at requests that routing found no operation for; the UI's
paths are never an operation's, so every request ends where it did.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from connexion.middleware.abstract import ROUTING_CONTEXT
from connexion.middleware.swagger_ui import SwaggerUIMiddleware
from connexion.spec import Specification
from starlette.types import ASGIApp, Receive, Scope, Send

ShownAs = Callable[[dict[str, Any]], dict[str, Any]]


class SwaggerUIAfterRouting(SwaggerUIMiddleware):
    """`shown`: by base path, how Swagger UI and `openapi.json` show a document other than as
    Connexion serves it (given a copy to change)."""

    def __init__(self, app: ASGIApp, shown: Mapping[str, ShownAs] | None = None) -> None:
        super().__init__(app)
        self.shown = dict(shown or {})
        # The router of the documents' mounts would redirect a bare base path (/v1) to itself with a
        # slash added (/v1/), where nothing is served either: a 404 at once names the paths that are
        # (errors.py). Each document's own router still redirects (/v1/openapi.json/ to
        # /v1/openapi.json), and /v1/ui to /v1/ui/ is a route of its own.
        self.router.redirect_slashes = False

    def add_api(
        self, specification: Specification, base_path: str | None = None, **kwargs: Any
    ) -> None:
        shown = self.shown.get(base_path or "")
        if shown is not None:
            specification = Specification.from_dict(shown(copy.deepcopy(specification.raw)))
        super().add_api(specification, base_path=base_path, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        routing = (
            scope.get("extensions", {}).get(ROUTING_CONTEXT, {}) if scope["type"] == "http" else {}
        )
        if routing.get("operation_id") is not None:
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
