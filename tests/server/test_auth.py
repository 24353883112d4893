"""Authentication's own parts: the Authorization header is read as Starlette's request headers read it."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from evalmock.server.auth import authorization

HEADER_LISTS = [
    [],
    [(b"host", b"x")],
    [(b"authorization", b"Bearer demo-user")],
    [(b"authorization", b"Bearer first"), (b"authorization", b"Bearer second")],
    [(b"x-authorization", b"Bearer no"), (b"authorization", b"Basic \xe9")],
    [(b"authorization", b"")],
]


@pytest.mark.parametrize("headers", HEADER_LISTS)
def test_the_authorization_header_is_the_first_one_as_starlette_reads_it(headers: list[tuple[bytes, bytes]]) -> None:
    scope = {"type": "http", "headers": headers}
    assert authorization(scope) == Headers(scope=scope).get("authorization")
