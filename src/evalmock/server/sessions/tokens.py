"""Session ids and tokens: unguessable, recognisable by a cheap prefix, stored only as a digest."""

from __future__ import annotations

import hashlib
import secrets

# Every session token begins so; a bearer token without it never costs a store look-up.
TOKEN_PREFIX = "evm_"
ID_PREFIX = "ses_"
_TOKEN_BYTES = 32  # 256 random bits: unguessable
_ID_BYTES = 12


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)


def new_session_id() -> str:
    return ID_PREFIX + secrets.token_urlsafe(_ID_BYTES)


def token_for_id(value: str) -> str | None:
    """Why `value` is no session id when it is a session token pasted where the id goes (else
    None); the words never hold the token, which is a secret."""
    if not value.startswith(TOKEN_PREFIX):
        return None
    return (
        "is a session token, not a session id: the id is the `id` that POST /__evalmock/sessions "
        "answered"
    )


def token_digest(token: str) -> str:
    """What a store keeps of a token: its SHA-256, so that a store's contents never hold a usable
    token."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()
