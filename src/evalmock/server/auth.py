"""Bearer tokens: the demo tokens, Prism-like acceptance of any well-formed token, and each 401's code."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from connexion.security import BearerSecurityHandler

from evalmock.server.errors import ApiError

MAX_TOKEN_LENGTH = 4096
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 b64token
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="evalmock"'}


@dataclass(frozen=True)
class Caller:
    kind: str  # "user" or "service", as the documents' Actor.kind
    id: str

    def token_info(self) -> dict[str, Any]:
        return {"sub": self.id, "kind": self.kind}


DEMO_CALLERS = {
    "demo-user": Caller("user", "user-demo"),
    "demo-service": Caller("service", "svc-demo"),
    "demo-other": Caller("user", "user-other"),  # a second caller, to see cursors bound to their caller
}
EXPIRED_TOKEN = "demo-expired"
REVOKED_TOKEN = "demo-revoked"
# What the banner and docs say about each demo token.
DEMO_TOKENS = {
    "demo-user": "a user (user-demo)",
    "demo-service": "a service (svc-demo)",
    "demo-other": "a second user (user-other), whose cursors the others cannot use",
    EXPIRED_TOKEN: "401 token-expired",
    REVOKED_TOKEN: "401 token-revoked",
}


def _unauthorized(message: str, code: str = "unauthorized") -> ApiError:
    return ApiError(401, code, message, headers=dict(_CHALLENGE))


def caller_for_token(token: str) -> Caller:
    """The caller a well-formed token stands for; any unknown token is a user of its own."""
    if token in DEMO_CALLERS:
        return DEMO_CALLERS[token]
    if token == EXPIRED_TOKEN:
        raise _unauthorized("The bearer token has expired.", "token-expired")
    if token == REVOKED_TOKEN:
        raise _unauthorized("The bearer token has been revoked.", "token-revoked")
    return Caller("user", "user-" + hashlib.sha256(token.encode()).hexdigest()[:12])


def authenticate(authorization: str | None) -> Caller:
    """The caller of an `Authorization` header value, or an ApiError 401 saying what is wrong with it."""
    if not authorization or not authorization.strip():
        raise _unauthorized("A bearer token is required.")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise _unauthorized("The Authorization header must use the Bearer scheme: 'Bearer <token>'.")
    token = token.strip(" ")
    if not token:
        raise _unauthorized("The bearer token is empty.")
    if len(token) > MAX_TOKEN_LENGTH or not _B64TOKEN.fullmatch(token):
        raise _unauthorized("The bearer token is malformed.")
    return caller_for_token(token)


class DemoBearerHandler(BearerSecurityHandler):
    """Connexion's bearer scheme, answered by `authenticate` (no x-bearerInfoFunc needed in the documents)."""

    def _resolve_func(self, security_scheme: dict[str, Any]) -> Any:
        return authenticate

    def _get_verify_func(self, function: Any) -> Any:
        def verify(request: Any) -> dict[str, Any]:
            return function(request.headers.get("authorization")).token_info()

        return verify


SECURITY_MAP = {"bearer": DemoBearerHandler}
