"""A base URL of a service: why it is unusable, if it is (a path that repeats a document's base
path, no host)."""

from __future__ import annotations

from urllib.parse import urlsplit

from evalmock.contract.documents import APIS as DOCUMENTS


def base_url_problem(base_url: str) -> str | None:
    """Why a base URL is unusable, or None when it is fine."""
    try:
        parts = urlsplit(base_url)
    except ValueError as exc:  # an unclosed IPv6 bracket
        return f"the base URL is not a URL ({exc}), got {base_url!r}"
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return (
            f"the base URL must be an http(s) URL such as http://127.0.0.1:8080, got {base_url!r}"
        )
    if parts.query or parts.fragment:
        return "the base URL must not carry a query or fragment"
    if any(character.isspace() for character in base_url) or not parts.hostname:
        return f"the base URL must name a host, without spaces, got {base_url!r}"
    try:
        parts.port  # noqa: B018  (urlsplit checks the port when it is read)
    except ValueError as exc:
        return f"the base URL's port is not a port ({exc}), got {base_url!r}"
    path = parts.path.rstrip("/")
    for document in DOCUMENTS.values():
        if document.base_path and path.endswith(document.base_path):
            root = base_url.rstrip("/").removesuffix(document.base_path)
            return (
                f"the base URL ends in {document.base_path}, which the {document.name} API's "
                "document adds to "
                f"every path itself: use {root}"
            )
    return None
