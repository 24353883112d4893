"""Bearer tokens: the demo tokens, tokens registered with --token, optionally any non-empty one (as
Prism accepts); each 401's code, and its message naming the demo tokens."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from connexion.lifecycle import ConnexionRequest
from connexion.middleware.security import SecurityAPI, SecurityMiddleware, SecurityOperation
from connexion.security import BearerSecurityHandler
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from evalmock.environment import ACCEPT_TOKENS as ACCEPT_TOKENS_ENV
from evalmock.server.errors import ApiError
from evalmock.server.sessions.active import CALLER_PREFIX, SESSION_SCOPE_KEY

MAX_TOKEN_LENGTH = 4096
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 b64token
# What --token registers: visible ASCII, spaces inside (DigitalOcean's SDK examples use the token
# `My Access Token`, which Prism accepts); a request's token is read with its outer spaces dropped.
_REGISTRABLE = re.compile(r"[!-~]([ !-~]*[!-~])?")


@dataclass(frozen=True)
class Caller:
    kind: str  # "user" or "service", as the documents' Actor.kind
    id: str
    reads: bool = (
        True  # False: valid, but without read on any project ("Needs read on the project.")
    )

    def token_info(self) -> dict[str, Any]:
        return {"sub": self.id, "kind": self.kind, "reads": self.reads}


USER_TOKEN = "demo-user"
SERVICE_TOKEN = "demo-service"
# a second caller, to see cursors bound to their caller
OTHER_TOKEN = "demo-other"
# a valid token without read on any project
NO_READ_TOKEN = "demo-no-read"
EXPIRED_TOKEN = "demo-expired"
REVOKED_TOKEN = "demo-revoked"
DEMO_CALLERS = {
    USER_TOKEN: Caller("user", "user-demo"),
    SERVICE_TOKEN: Caller("service", "svc-demo"),
    OTHER_TOKEN: Caller("user", "user-other"),
    NO_READ_TOKEN: Caller("user", "user-no-read", reads=False),
}
# What the banner and docs say about each demo token.
DEMO_TOKENS = {
    USER_TOKEN: "a user (user-demo)",
    SERVICE_TOKEN: "a service (svc-demo)",
    OTHER_TOKEN: "a second user (user-other), whose cursors the others cannot use",
    NO_READ_TOKEN: "a user (user-no-read) without read on any project: 404 agent-not-found on /v1",
    EXPIRED_TOKEN: "401 token-expired",
    REVOKED_TOKEN: "401 token-revoked",
}


def demo_tokens_hint() -> str:
    """The sentence every 401 ends with: the tokens evalmock serve accepts as they come (not the
    expired and revoked ones, so that a 401 never repeats the token it refused)."""
    valid = ", ".join(DEMO_CALLERS)
    return f"evalmock serve's demo tokens: {valid} (Authorization: Bearer {USER_TOKEN})."


def with_demo_tokens(spec: dict[str, Any]) -> dict[str, Any]:
    """A served document whose bearer schemes' descriptions end naming the demo tokens (Swagger
    UI's Authorize dialog shows them); the files under openapi/ describe the real services."""
    for scheme in spec.get("components", {}).get("securitySchemes", {}).values():
        if str(scheme.get("scheme", "")).lower() == "bearer":
            described = str(scheme.get("description", "")).rstrip()
            listed = "; ".join(f"`{token}`, {meaning}" for token, meaning in DEMO_TOKENS.items())
            demo = f"evalmock serve's demo tokens (paste one as the value): {listed}."
            scheme["description"] = f"{described}\n\n{demo}".lstrip()
    return spec


def unauthorized(message: str, code: str = "unauthorized") -> ApiError:
    """A 401 (with the challenge every 401 carries) whose message ends naming the demo tokens."""
    return ApiError(401, code, f"{message} {demo_tokens_hint()}")


CALLER_KINDS = ("user", "service")


def _caller_of(token: str, kind: str) -> Caller:
    # A registered or accepted token's caller id is derived from it, so the token itself never
    # shows.
    prefix = "user-" if kind == "user" else "svc-"
    return Caller(kind, prefix + hashlib.sha256(token.encode()).hexdigest()[:12])


def parse_token_option(text: str) -> tuple[str, str]:
    """`NAME` or `NAME:user|service` (the --token flag) as (token, kind); ValueError says what is
    wrong."""
    token, _, kind = (
        text.rpartition(":") if text.endswith((":user", ":service")) else (text, "", "user")
    )
    if not token or len(token) > MAX_TOKEN_LENGTH or not _REGISTRABLE.fullmatch(token):
        raise ValueError(
            f"a token is 1..{MAX_TOKEN_LENGTH} visible ASCII characters (spaces only between "
            f"them), optionally followed by :user or :service; got {text[:80]!r}"
        )
    if token in DEMO_TOKENS:
        raise ValueError(f"{token!r} is already a demo token")
    return token, kind


def accepted_tokens(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """The tokens of ACCEPT_TOKENS_ENV (whitespace-separated), each as --token reads it; ValueError
    names the variable and what is wrong, never the token."""
    tokens = []
    for number, text in enumerate(environ.get(ACCEPT_TOKENS_ENV, "").split(), 1):
        try:
            tokens.append(parse_token_option(text))
        except ValueError as exc:
            reason = str(exc).split("; got ")[0]  # the value may be a real token: not quoted back
            raise ValueError(f"{ACCEPT_TOKENS_ENV}: its token number {number}: {reason}") from None
    return tokens


@functools.lru_cache(maxsize=4096)
def _session_token_info(session_id: str) -> Mapping[str, Any]:
    """A session's caller as the handlers read it, made once while its session is among the last
    few thousand used (read-only: every request of the session shares it)."""
    return MappingProxyType(Caller("user", CALLER_PREFIX + session_id).token_info())


class Tokens:
    """Which bearer tokens a server accepts: its demo tokens, the registered ones, and (only with
    --any-token) any other non-empty token, spaces included, as a user of its own, as Prism
    does."""

    def __init__(
        self, registered: tuple[tuple[str, str], ...] = (), *, any_token: bool = False
    ) -> None:
        self.callers = {
            **DEMO_CALLERS,
            **{token: _caller_of(token, kind) for token, kind in registered},
        }
        self.any_token = any_token

    def caller(self, token: str) -> Caller:
        """The caller a non-empty token stands for, or an ApiError 401 naming the fix."""
        known = self.callers.get(token)
        if known is not None:
            return known
        if token == EXPIRED_TOKEN:
            raise unauthorized("The bearer token has expired.", "token-expired")
        if token == REVOKED_TOKEN:
            raise unauthorized("The bearer token has been revoked.", "token-revoked")
        if self.any_token:
            return _caller_of(token, "user")
        if not _B64TOKEN.fullmatch(token):
            raise unauthorized(
                "The bearer token is malformed: not an RFC 6750 b64token (A-Z a-z 0-9 - . _ ~ + /, "
                "then = padding); register it with --token, or start with --any-token to accept "
                "any non-empty token."
            )
        raise unauthorized(
            "The bearer token is not one this server issued: it accepts tokens registered with "
            "--token NAME[:user|service], and any non-empty one when started with --any-token."
        )

    def authenticate(self, authorization: str | None) -> Caller:
        """The caller of an `Authorization` header value, or an ApiError 401 saying what is wrong
        with it."""
        if not authorization or not authorization.strip():
            raise unauthorized("A bearer token is required.")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise unauthorized(
                "The Authorization header must use the Bearer scheme: 'Bearer <token>'."
            )
        token = token.strip(" ")
        if not token:
            raise unauthorized("The bearer token is empty.")
        if len(token) > MAX_TOKEN_LENGTH:
            raise unauthorized("The bearer token is malformed.")
        return self.caller(token)


def security_map(tokens: Tokens) -> dict[str, type[BearerSecurityHandler]]:
    """Connexion's bearer scheme answered by `tokens` (no x-bearerInfoFunc needed in the
    documents)."""

    class BearerHandler(BearerSecurityHandler):
        def _resolve_func(self, security_scheme: dict[str, Any]) -> Any:
            return tokens.authenticate

        def _get_verify_func(self, function: Any) -> Any:
            def verify(request: ConnexionRequest) -> Mapping[str, Any]:
                session = request.scope.get(SESSION_SCOPE_KEY)
                if session is not None:
                    # SessionMiddleware found the session of the request's first Authorization
                    # header, which is the one read here; a session token it did not find, it
                    # answered itself
                    return _session_token_info(session.record.id)
                return function(authorization(request.scope)).token_info()

            return verify

    return {"bearer": BearerHandler}


def authorization(scope: Scope) -> str | None:
    """The request's first Authorization header, as Starlette's `request.headers.get` reads it."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return value.decode("latin-1")
    return None


class SecurityRequest(ConnexionRequest):
    """Connexion's request as its security handlers get it, with the scope at hand rather than
    behind its proxy to a Starlette request: the bearer check reads only the scope, so that request
    is made only for a handler that asks."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.uri_parser = None
        self._context = self._mimetype = self._path_params = self._query_params = self._form = (
            self._files
        ) = None

    def __getattr__(self, name: str) -> Any:
        if name == "_starlette_request":
            self._starlette_request = Request(self.scope)
            return self._starlette_request
        return getattr(self._starlette_request, name)


class _SecurityOperation(SecurityOperation):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.security:
            await self.next_app(scope, receive, send)
            return
        await self.verification_fn(SecurityRequest(scope))
        await self.next_app(scope, receive, send)


class _SecurityAPI(SecurityAPI):
    def make_operation(self, operation: Any) -> SecurityOperation:
        return _SecurityOperation.from_operation(
            operation,
            next_app=self.next_app,
            security_handler_factory=self.security_handler_factory,
        )


class AuthMiddleware(SecurityMiddleware):
    """Connexion's SecurityMiddleware: each operation's security requirements from its document,
    checked by Connexion's handlers (the bearer one answered by `Tokens`), in the same place in the
    stack."""

    api_cls = _SecurityAPI
