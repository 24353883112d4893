"""Routing: Connexion's RoutingMiddleware, with the routes it built from the documents matched in
one pass.

Connexion routes each request through a Starlette Router per document, mounted on a Router of all of
them: two routers, a mount, a copy of the scope kept in a context variable and a routing operation
that puts it back, on every request. Here the same routes (the mounts' and the operations' compiled
patterns, methods and convertors, read from Connexion's router once it holds both documents) are
tried in the same order, and a request that matches an operation fully gets the scope Connexion's
routing operation would pass on. Anything else (a path no operation has, a method an operation does
not answer, a root path) goes through Connexion's router, so every answer stays Connexion's; but a
path with a slash added is a path no operation has (404), not one Starlette redirects to the
operation's: a client's wrong URL would work against the mock and fail against the service.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from connexion.middleware.abstract import ROUTING_CONTEXT
from connexion.middleware.routing import RoutingMiddleware, RoutingOperation
from starlette.routing import Mount, Route, Router
from starlette.types import Receive, Scope, Send


@dataclass(frozen=True)
class _Operation:
    """One operation's route: a path pattern below its document's base path, its methods and
    convertors."""

    pattern: re.Pattern[str]
    methods: frozenset[str] | None
    convertors: dict[str, Any]
    operation_id: str | None


@dataclass(frozen=True)
class _Document:
    """One mounted document: its base path's pattern and its operations in the router's order."""

    pattern: re.Pattern[str]
    base_path: str
    operations: tuple[_Operation, ...]


def _operations(router: Router) -> tuple[_Operation, ...] | None:
    found = []
    for route in router.routes:
        if not isinstance(route, Route) or not isinstance(route.app, RoutingOperation):
            return None
        found.append(
            _Operation(
                route.path_regex,
                frozenset(route.methods) if route.methods else None,
                route.param_convertors,
                route.app.operation_id,
            )
        )
    return tuple(found)


def route_table(router: Router) -> tuple[_Document, ...] | None:
    """The documents' routes as Connexion's router holds them; None where its shape is not the one
    read here (then every request takes Connexion's router)."""
    documents = []
    for mount in router.routes:
        if not isinstance(mount, Mount) or set(mount.param_convertors) != {"path"}:
            return None
        inner = mount.app
        if not isinstance(inner, Router) or inner.middleware_stack != inner.app:
            return None
        if not isinstance(inner.default, RoutingOperation):
            return None
        if inner.default.operation_id is not None:
            return None
        operations = _operations(inner)
        if operations is None:
            return None
        documents.append(_Document(mount.path_regex, mount.path, operations))
    return tuple(documents)


def no_slash_redirects(router: Router) -> None:
    """Turn off Starlette's redirect of a path with a slash added (or left off) in `router` and the
    routers mounted on it."""
    router.redirect_slashes = False
    for route in router.routes:
        if isinstance(route, Mount) and isinstance(route.app, Router):
            no_slash_redirects(route.app)


class DocumentRoutingMiddleware(RoutingMiddleware):
    """Connexion's RoutingMiddleware (same routes, same scope for the next app); full matches in one
    pass."""

    _table: tuple[_Document, ...] | None = None

    def add_api(self, *args: Any, **kwargs: Any) -> None:
        super().add_api(*args, **kwargs)
        self._table = route_table(self.router)
        no_slash_redirects(self.router)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        table = self._table
        if table is None or scope["type"] != "http" or scope.get("root_path"):
            await super().__call__(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        for document in table:
            mounted = document.pattern.match(path)
            if mounted is None:
                continue
            # A Starlette mount takes every path below it: the first one that matches decides, as in
            # its Router.
            rest = "/" + mounted["path"]
            for operation in document.operations:
                match = operation.pattern.match(rest)
                if match is None or (
                    operation.methods is not None and method not in operation.methods
                ):
                    continue
                convertors = operation.convertors
                params = {
                    name: convertors[name].convert(value)
                    for name, value in match.groupdict().items()
                }
                await self.app(
                    _routed(scope, params, document.base_path, operation.operation_id),
                    receive,
                    send,
                )
                return
            break
        await super().__call__(scope, receive, send)


def _routed(
    scope: Scope, path_params: dict[str, Any], base_path: str, operation_id: str | None
) -> Scope:
    """The scope Connexion's RoutingOperation passes on: a copy with the path parameters and routing
    context."""
    routed = scope.copy()
    routed.setdefault("path_params", {}).update(path_params)
    extensions = routed.setdefault("extensions", {})
    extensions.setdefault(ROUTING_CONTEXT, {}).update(
        {"api_base_path": base_path, "operation_id": operation_id}
    )
    return routed
