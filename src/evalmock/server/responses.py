"""JSON responses serialised with orjson (or already encoded), ready for Connexion to pass through
untouched."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return encoded_json_response(orjson.dumps(body), status, headers)


def encoded_json_response(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A body that is JSON already, such as one joined from the world's encoded cases."""
    return Response(body, status_code=status, headers=headers, media_type="application/json")
