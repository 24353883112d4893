"""Calling an operation's handler: its arguments mapped once at start-up from what request
validation parsed.

Connexion's AsyncApp calls a handler through per-request decorators that read the handler's
signature again, convert every parameter name and parse the query string once more, on every
request. Here each operation gets that mapping once, when Connexion adds the operation: document
parameter -> handler argument, with Connexion's own naming (`pythonic_params`) and the document's
defaults. On a request, the values come from the parameter validator (validation.py), which has
already parsed and coerced them, and the security context (`token_info`) from Connexion's security
middleware. Routing, security and validation stay Connexion's, driven by the documents and the
operation ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from connexion import AsyncApp
from connexion.apps.asynchronous import AsyncApi, AsyncASGIApp
from connexion.decorators.parameter import pythonic, sanitized
from connexion.operations import AbstractOperation
from connexion.utils import inspect_function_arguments
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from evalmock.server.body_validation import BODY_SCOPE_KEY
from evalmock.server.validation import PARAMETERS_SCOPE_KEY

Handler = Callable[..., Awaitable[Response]]
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Argument:
    """One document parameter as the handler receives it."""

    parameter: str  # the name in the document
    argument: str  # the handler's keyword
    default: Any = (
        _NO_DEFAULT  # the schema's default, passed when the request leaves the parameter out
    )


def arguments_for(
    operation: AbstractOperation, handler: Handler, pythonic_params: bool
) -> tuple[Argument, ...]:
    """The mapping Connexion's parameter decorator would derive on each request, derived once."""
    accepted, takes_any = inspect_function_arguments(handler)
    rename = pythonic if pythonic_params else sanitized
    mapped = []
    for parameter in operation.parameters:
        if parameter["in"] not in ("path", "query"):
            continue  # headers and cookies are not handler arguments in Connexion either
        name = rename(parameter["name"])
        if name not in accepted and not takes_any:
            if parameter["in"] == "path":
                raise TypeError(
                    f"{operation.operation_id}: the handler takes no argument {name!r} for its path"
                )
            continue
        default = parameter.get("schema", {}).get("default", _NO_DEFAULT)
        mapped.append(Argument(parameter["name"], name, default))
    return tuple(mapped)


class PreparedOperation:
    """The ASGI app of one operation: call its handler with the validated values, send what it
    returns."""

    def __init__(
        self,
        operation_id: str,
        handler: Handler,
        arguments: tuple[Argument, ...],
        context_names: frozenset[str] | None,
        takes_body: bool = False,
    ) -> None:
        if not asyncio.iscoroutinefunction(handler):
            raise TypeError(f"{operation_id}: the handler must be a coroutine function")
        self.operation_id = operation_id
        self.handler = handler
        self.arguments = arguments
        self.context_names = (
            context_names  # security context keys the handler takes; None: all of them
        )
        self.takes_body = takes_body  # the validated JSON body, as `body` (None: none came)

    @classmethod
    def from_operation(
        cls, operation: AbstractOperation, pythonic_params: bool
    ) -> PreparedOperation:
        handler = operation.function
        accepted, takes_any = inspect_function_arguments(handler)
        return cls(
            operation.operation_id,
            handler,
            arguments_for(operation, handler, pythonic_params),
            None if takes_any else frozenset(accepted),
            "body" in accepted and bool(operation.request_body),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # KeyError: the parameter validator did not run for this request
        values = scope[PARAMETERS_SCOPE_KEY]
        kwargs = {}
        for argument in self.arguments:
            value = values.get(argument.parameter, argument.default)
            if value is not _NO_DEFAULT:
                kwargs[argument.argument] = value
        if self.takes_body:
            kwargs["body"] = scope.get(BODY_SCOPE_KEY)
        context = scope.get("extensions", {}).get("connexion_context", {})
        for key, value in context.items():
            if self.context_names is None or key in self.context_names:
                kwargs[key] = value
        response = await self.handler(**kwargs)
        await response(scope, receive, send)


class PreparedApi(AsyncApi):
    def make_operation(self, operation: AbstractOperation) -> PreparedOperation:  # type: ignore[override]
        return PreparedOperation.from_operation(operation, self.pythonic_params)


class PreparedASGIApp(AsyncASGIApp):
    api_cls = PreparedApi

    def __init__(self) -> None:
        super().__init__()
        # Its router of the documents' mounts would redirect a bare base path (/v1) to /v1/, where
        # nothing is served either (swagger_ui.py turns off the same redirect in the router before
        # it).
        self.router.redirect_slashes = False


class PreparedApp(AsyncApp):
    """Connexion's AsyncApp (same options, same middleware), its operations called through
    PreparedOperation."""

    def __init__(self, import_name: str, **options: Any) -> None:
        super().__init__(import_name, **options)
        # AsyncApp wraps an AsyncASGIApp; nothing is registered on it before the first request
        # builds the stack.
        self._middleware_app = self.middleware.app = PreparedASGIApp()
