"""Every error as the API's own body: the test-set envelope on /v1 (and elsewhere), DigitalOcean's
on /v2."""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import orjson
from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from connexion.middleware.exceptions import ExceptionMiddleware
from starlette._exception_handler import wrap_app_handling_exceptions
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from evalmock.contract.documents import ADMIN, GRADIENT, TEST_SET
from evalmock.contract.operations import operations
from evalmock.contract.statuses import documented
from evalmock.server.request_id import current_request_id
from evalmock.world.data_schema import CONTROL_CHARACTERS

logger = logging.getLogger("evalmock.server")

MAX_ECHO = 120  # longest client-supplied text quoted back in a message
# every 401 carries one (RFC 9110), a forced one too
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="evalmock"'}
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")

# The envelope's code for a status when nothing more specific is known.
STATUS_CODES = {
    400: "bad-input",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    415: "unsupported-media-type",
    429: "too-many-requests",
    500: "internal",
    503: "database-busy",
}
MESSAGES = {
    "bad-input": "The request is not valid.",
    "unauthorized": "A bearer token is required.",
    "agent-not-found": "No such agent.",
    "not-found": "Nothing is served at this path.",
    "method-not-allowed": "This path does not answer this method.",
    "database-busy": "The database was too busy to answer in time; try again later.",
    "internal": "Internal server error.",
}
# DigitalOcean ids for statuses its document does not list with an example of their own.
_DIGITALOCEAN_FALLBACK_IDS = {400: "bad_request", 403: "forbidden", 405: "method_not_allowed"}
# ... and their messages where the test-set API's would name its own things (its database).
_DIGITALOCEAN_FALLBACK_MESSAGES = {503: "The service is unavailable for a moment; try again later."}


class ApiError(Exception):
    """An error answer: raised anywhere on a request's path, rendered in the API's own body.

    `code` is the test-set envelope's code; on /v2 the DigitalOcean id follows from the status.
    `message=None` takes the API's canonical message for the code (or, on /v2, for the status). A
    401 comes with CHALLENGE besides `headers`. `details` is a list only in the admin API's body
    (each mistake with its JSON path).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str | None = None,
        details: dict[str, Any] | list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message or code)
        self.status = self.status_code = (
            status  # Connexion's security layer ranks errors by status_code
        )
        self.code = code
        self.message = message
        self.details: Any = details or {}
        self.headers = {**CHALLENGE, **(headers or {})} if status == 401 else headers or {}


def echo(text: str) -> str:
    """Client text safe to quote in a message: bounded, with control characters escaped."""
    quoted = repr(text[:MAX_ECHO])
    return quoted if len(text) <= MAX_ECHO else quoted + "…"


def bad_input(parameter: str, message: str) -> ApiError:
    return ApiError(400, "bad-input", message, {"parameter": parameter})


def database_busy(retry_after: int) -> ApiError:
    return ApiError(
        503,
        "database-busy",
        None,
        {"retryAfterSeconds": retry_after},
        {"Retry-After": str(retry_after)},
    )


def agent_not_found(agent_id: str) -> ApiError:
    return ApiError(
        404, "agent-not-found", f"No agent {echo(agent_id)}.", {"agentId": agent_id[:MAX_ECHO]}
    )


def unknown_agent(agent_id: str) -> ApiError:
    """Why no agent answers to `agent_id`: 400 bad-input when it holds a control character (C0, DEL
    or C1, which no agent id holds), else 404 agent-not-found."""
    if _CONTROL.search(agent_id):
        return bad_input("agentId", "Path parameter 'agentId' must not contain control characters.")
    return agent_not_found(agent_id)


def for_status(status: int, message: str | None = None) -> ApiError:
    """The generic error of a status, for errors that come from the framework rather than a
    handler."""
    code = STATUS_CODES.get(status) or ("bad-input" if status < 500 else "internal")
    return ApiError(status, code, message)


# -- rendering
# ---------------------------------------------------------------------------------------------


@functools.cache
def _gradient_base_path() -> str:
    return GRADIENT.base_path  # read once: finding the document's folder touches the file system


def is_gradient_path(path: str) -> bool:
    base = _gradient_base_path()
    return path == base or path.startswith(base + "/")


@functools.cache
def admin_base_path() -> str:
    return ADMIN.base_path


def is_admin_path(path: str) -> bool:
    base = admin_base_path()
    return path == base or path.startswith(base + "/")


@functools.cache
def digitalocean_errors() -> dict[int, tuple[str, str]]:
    """status -> (id, message), from the examples of the DigitalOcean document's error responses."""
    return {
        status: (found.code, found.message or "")
        for status, found in documented(GRADIENT.name).items()
        if found.code is not None
    }


def digitalocean_body(error: ApiError, request_id: str) -> dict[str, Any]:
    known = digitalocean_errors().get(error.status)
    if known:
        error_id, canonical = known
    else:
        fallback = "bad_request" if error.status < 500 else "server_error"
        error_id = _DIGITALOCEAN_FALLBACK_IDS.get(error.status, fallback)
        canonical = _DIGITALOCEAN_FALLBACK_MESSAGES.get(error.status) or MESSAGES.get(
            error.code, "Error."
        )
    return {"id": error_id, "message": error.message or canonical, "request_id": request_id}


def envelope_body(error: ApiError, request_id: str) -> dict[str, Any]:
    message = error.message or MESSAGES.get(error.code, "Error.")
    return {
        "error": {
            "code": error.code,
            "message": message,
            "details": error.details,
            "requestId": request_id,
        }
    }


def admin_body(error: ApiError, request_id: str) -> dict[str, Any]:
    """The admin API's envelope: the test-set envelope's fields, `details` a list of mistakes."""
    body = envelope_body(error, request_id)
    details = error.details
    if isinstance(details, dict) and "parameter" in details and "path" not in details:
        # a parameter refused as the APIs refuse one: said as every admin mistake is
        details = {"path": details["parameter"], "message": error.message}
    body["error"]["details"] = (
        details if isinstance(details, list) else [details] if details else []
    )
    return body


def error_body(error: ApiError, path: str, request_id: str) -> bytes:
    """The error as the JSON body of the API that `path` belongs to."""
    if is_gradient_path(path):
        body = digitalocean_body(error, request_id)
    elif is_admin_path(path):
        body = admin_body(error, request_id)
    else:
        body = envelope_body(error, request_id)
    return orjson.dumps(body)


def render(error: ApiError, path: str) -> ConnexionResponse:
    return ConnexionResponse(
        status_code=error.status,
        mimetype="application/json",
        body=error_body(error, path, current_request_id()),
        headers=dict(error.headers),
    )


# -- Connexion error handlers
# ------------------------------------------------------------------------------


async def on_api_error(request: ConnexionRequest, exc: ApiError) -> ConnexionResponse:
    return render(exc, request.scope["path"])


async def on_problem(request: ConnexionRequest, exc: ProblemException) -> ConnexionResponse:
    """Connexion's own errors (e.g. response validation): never its problem+json, always our
    body."""
    detail = str(exc.detail or exc.title or "").split("\n\n", 1)[0]
    if exc.status == 415:
        # Connexion's words name Python lists; the media type sent is client text
        sent = request.headers.get("content-type", "")
        detail = f"The body must be application/json; the request's Content-Type is {echo(sent)}."
    if exc.status >= 500:
        logger.error("%s %s: %s", request.scope.get("method"), request.scope["path"], exc.detail)
    error = for_status(exc.status, detail or None)
    error.headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() != "content-type"}
    return render(error, request.scope["path"])


@functools.cache
def _agent_list_path() -> re.Pattern[str]:
    """The list operation's full path with `agentId` matching anything, newlines and slashes
    included."""
    template = TEST_SET.base_path + next(iter(TEST_SET.spec["paths"]))
    head, _, tail = template.partition("{agentId}")
    return re.compile(re.escape(head) + "(?P<agent>.+)" + re.escape(tail), re.DOTALL)


@functools.cache
def _routes_of_each_api() -> dict[str, str]:
    """base path -> what a 404 under it names: the API's operations and its Swagger UI."""
    named: dict[str, list[str]] = {}
    for operation in operations().values():
        base = operation.document.base_path
        named.setdefault(base, []).append(f"{operation.method} {base}{operation.path}")
    return {
        base: f"this API answers {', '.join(routes)} (Swagger UI: {base}/ui/)."
        for base, routes in named.items()
    }


@functools.cache
def _admin_routes() -> str:
    """What a 404 under the admin API names: its routes, as its document declares them."""
    base = admin_base_path()
    routes = [
        f"{method.upper()} {base}{route}"
        for route, item in ADMIN.spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]
    return f"the admin API answers {', '.join(routes)} (Swagger UI: {base}/ui/)."


def _where_the_routes_are(path: str) -> str:
    """A wrong path's way back: the operations of the API it is under, else where the APIs live."""
    if is_admin_path(path):
        return _admin_routes()
    routes = _routes_of_each_api()
    for base, named in routes.items():
        if path == base or path.startswith(base + "/"):
            return named
    return f"the APIs live under {' and '.join(routes)}."


def _allowed(exc: HTTPException) -> str:
    """The Allow list in a fixed order: Starlette keeps a route's methods in a set, whose order
    varies by process."""
    return ", ".join(sorted(str((exc.headers or {}).get("Allow", "")).split(", ")))


async def on_http_exception(request: ConnexionRequest, exc: HTTPException) -> ConnexionResponse:
    path = request.scope["path"]
    agent = _agent_list_path().fullmatch(path) if exc.status_code == 404 else None
    if agent is not None:
        # The router cannot match an agent id holding a line break or a slash, so the request never
        # reached the handler, which answers the rest of them the same way.
        return render(unknown_agent(agent["agent"]), path)
    if exc.status_code == 404:
        message = (
            f"No route {request.scope.get('method', 'GET')} {echo(path)}; "
            f"{_where_the_routes_are(path)}"
        )
    elif exc.status_code == 405:
        message = f"{request.scope.get('method')} is not allowed here; allowed: {_allowed(exc)}."
    else:
        message = str(exc.detail) if exc.detail else None
    error = for_status(exc.status_code, message)
    error.headers = dict(exc.headers or {})  # keeps Allow on a 405
    if "Allow" in error.headers:
        error.headers["Allow"] = _allowed(exc)
    return render(error, path)


async def on_unhandled(request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    logger.error("unhandled error on %s", request.scope.get("path"), exc_info=exc)
    return render(for_status(500), request.scope.get("path", "/"))


ERROR_HANDLERS: tuple[tuple[type[Exception], Any], ...] = (
    (ApiError, on_api_error),
    # explicitly: Connexion pre-registers a handler of its own for it
    (
        ProblemException,
        on_problem,
    ),
    (HTTPException, on_http_exception),
    (Exception, on_unhandled),
)


def install(app: Any) -> None:
    """Register the handlers."""
    for exception, handler in ERROR_HANDLERS:
        app.add_error_handler(exception, handler)


class ErrorHandlersMiddleware(ExceptionMiddleware):
    """Connexion's ExceptionMiddleware (the handlers above, in its place in the stack), Starlette's
    request object and handler wrapper made only when a request raises, rather than for every
    request.

    An exception goes to Starlette's own wrapper, raised again inside it, so it is handled (or not)
    exactly as Starlette handles it; after the response has started, nothing more is sent, as in
    Starlette.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        scope["starlette.exception_handlers"] = (self._exception_handlers, self._status_handlers)
        started = False

        async def sender(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, sender)
        except Exception as exc:
            caught = exc

            async def raise_again(_scope: Scope, _receive: Receive, send_on: Send) -> None:
                # Starlette's wrapper sees the start it would have seen, and sends nothing more
                if started:
                    await send_on({"type": "http.response.start", "status": 500, "headers": []})
                raise caught

            await wrap_app_handling_exceptions(raise_again, Request(scope, receive, send))(
                scope, receive, _discard if started else send
            )


async def _discard(message: Message) -> None:
    pass
