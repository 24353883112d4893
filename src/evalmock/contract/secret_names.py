"""Which names say a value is a secret: a header, a query parameter, a JSON field. One rule for
every output that hides secrets (the harness's reports, the proxy's HAR, the mock's access log)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from urllib.parse import unquote

from evalmock.contract.documents import APIS

# Headers that always carry a secret, whatever their value looks like.
SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
# Headers whose names say auth but whose values are public (a challenge, not a credential).
PUBLIC_HEADERS = frozenset({"www-authenticate", "proxy-authenticate", "authentication-info"})
_SECRET_WORDS = re.compile(r"key|token|secret|passw|signature|session|credential", re.IGNORECASE)
# whole words only: as parts they match too much
_SECRET_SHORT_WORDS = frozenset({"sig", "pwd", "sid", "jwt"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def says_secret(name: str) -> bool:
    """Whether a header or query parameter's name says it holds a secret (key, token, secret,
    password, signature, session, credential; sig, pwd, sid or jwt as a whole word)."""
    if _SECRET_WORDS.search(name):
        return True
    return any(word.lower() in _SECRET_SHORT_WORDS for word in _WORDS.findall(name))


@functools.cache
def scheme_names() -> tuple[frozenset[str], frozenset[str]]:
    """The header names (lower case) and query parameter names the documents' apiKey securitySchemes
    name."""
    headers: set[str] = set()
    queries: set[str] = set()
    for document in APIS.values():
        schemes = document.spec.get("components", {}).get("securitySchemes", {}) or {}
        for scheme in schemes.values():
            if (
                isinstance(scheme, Mapping)
                and scheme.get("type") == "apiKey"
                and scheme.get("name")
            ):
                if scheme.get("in") == "header":
                    headers.add(str(scheme["name"]).lower())
                elif scheme.get("in") == "query":
                    queries.add(str(scheme["name"]))
    return frozenset(headers), frozenset(queries)


@functools.lru_cache(maxsize=4096)  # the same few names on every exchange
def secret_header(name: str) -> bool:
    """Whether a header's value is a secret: the credential and cookie headers, any header an apiKey
    scheme of the documents names, and any header whose name says secret."""
    lowered = name.lower()
    if lowered in SECRET_HEADERS or lowered in scheme_names()[0]:
        return True
    return lowered not in PUBLIC_HEADERS and says_secret(name)


@functools.lru_cache(maxsize=4096)
def secret_query(name: str) -> bool:
    """Whether a query parameter's value is a secret: one an apiKey scheme names, or one whose name
    says secret."""
    name = unquote(name)
    return name in scheme_names()[1] or says_secret(name)


# In a JSON body a field's name is read word by word, and its last word (before an `id`) says what
# it holds: `accessToken`, `client_secret`, `sessionId` hold secrets, where an item's `key`, a
# `tokenType`, a `tokenizer`, `maxTokens` or a `signatureAlgorithm` do not. A header or query name
# is rarely so plain. Plurals count where they can only be a list of secrets (`passwords`,
# `apiKeys`), not `tokens`, which counts an LLM's tokens (`maxTokens`, `total_tokens`) more often
# than it lists credentials.
_SECRET_FIELD_WORDS = frozenset(
    {
        "token",
        "jwt",
        "jwts",
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "pwd",
        "credential",
        "credentials",
        "session",
        "sid",
        "signature",
        "signatures",
        "sig",
        "authorization",
        "cookie",
        "cookies",
    }
)
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "client", "auth", "signing", "master", "session"}
)
# Every name `secret_field` finds holds one of these in lower case: a body holding none has no
# secret field.
SECRET_FIELD_PARTS = tuple(sorted(_SECRET_FIELD_WORDS | {"key"}))


@functools.lru_cache(maxsize=4096)
def secret_field(name: str) -> bool:
    """Whether a JSON field's name says its value is a secret: its last word (or the one before a
    last `id`) is a secret's (token, secret, password, credential, session, signature, jwt, sid,
    ...; plurals but `tokens`), or it is a key with a secret's qualifier (`apiKey`, `access_key`,
    `privateKey`, `accessKeyId`, `apiKeys`)."""
    words = [word.lower() for word in _WORDS.findall(name)]
    if len(words) > 1 and words[-1] == "id":
        words.pop()
    if not words:
        return False
    last = words[-1]
    if last in _SECRET_FIELD_WORDS:
        return True
    singular = last.removesuffix("s")
    if singular == "key":
        return len(words) > 1 and words[-2] in _KEY_QUALIFIERS
    return singular.endswith("key") and singular[:-3] in _KEY_QUALIFIERS  # `apikey` as one word
