"""Request bodies: Connexion's JSON body validator, bounded in size, naming every mistake at its
JSON path, and handing the parsed body to the handler (dispatch.py)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import orjson
from connexion.validators.json import JSONRequestBodyValidator
from jsonschema import ValidationError
from starlette.types import Receive, Scope

from evalmock.nouns import counted
from evalmock.server.errors import MAX_ECHO, ApiError, bad_input, echo
from evalmock.server.validation import FORMAT_CHECKER, SchemaValidator, describe

# Where a validated request's JSON body waits for its handler (None: no body).
BODY_SCOPE_KEY = "evalmock.body"
MAX_BODY_MISTAKES = 50  # listed in one 400
SUMMARIZED = 3  # of them, said in its message too


def json_path(parts: Any) -> str:
    """A place in a JSON body as a JSONPath (`$.data.testSet[0].id`)."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            path += f".{part}"
        else:
            path += f"[{orjson.dumps(str(part)[:MAX_ECHO]).decode()}]"
    return path


def _body_mistake(error: ValidationError) -> dict[str, str]:
    path = json_path(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = ", ".join(error.schema.get("properties", {})) or "none"
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        names = ", ".join(echo(str(name)) for name in extra[:10])
        return {"path": path, "message": f"unknown field {names}; this object takes: {allowed}"}
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "a field"
        return {"path": json_path([*error.absolute_path, missing]), "message": "is required"}
    if error.validator == "maxProperties":
        return {"path": path, "message": f"must have at most {error.validator_value} fields"}
    return {"path": path, "message": describe(error, error.schema)}


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(
        413, "too-large", f"The body is larger than {max_bytes} bytes, the most this API takes."
    )


def _not_json(exc: orjson.JSONDecodeError) -> ApiError:
    reason = str(exc).split(":")[0]
    return ApiError(
        400,
        "bad-input",
        f"The body is not JSON: {reason}.",
        [{"path": "$", "message": f"not JSON: {reason}"}],
    )


def _invalid(errors: list[ValidationError]) -> ApiError:
    mistakes = [_body_mistake(error) for error in errors[:MAX_BODY_MISTAKES]]
    more = len(errors) - len(mistakes)
    summary = "; ".join(f"{m['path']}: {m['message']}" for m in mistakes[:SUMMARIZED])
    rest = len(mistakes) - SUMMARIZED
    return ApiError(
        400,
        "bad-input",
        f"The body is not valid ({counted(len(errors), 'mistake')}"
        f"{f', {more} not listed' if more else ''}): {summary}"
        f"{f'; and {rest} more in details' if rest > 0 else ''}.",
        mistakes,
    )


def bounded_json_body(max_bytes: int) -> type[JSONRequestBodyValidator]:
    """Connexion's JSON body validator, reading at most `max_bytes` (413 too-large), refusing with
    every mistake at its JSON path (400 bad-input), and leaving the body in the scope for the
    handler (BODY_SCOPE_KEY). An empty body is no body."""

    def too_large() -> ApiError:
        return _too_large(max_bytes)

    class BoundedJSONBodyValidator(JSONRequestBodyValidator):
        async def wrap_receive(self, receive: Receive, *, scope: Scope) -> tuple[Receive, Scope]:
            for name, value in scope["headers"]:
                if name == b"content-length":
                    if not value.strip().isdigit():
                        raise bad_input("Content-Length", "Content-Length must be a whole number.")
                    if int(value) > max_bytes:
                        raise too_large()
            scope[BODY_SCOPE_KEY] = None
            return await super().wrap_receive(receive, scope=scope)

        async def _parse(self, stream: AsyncIterator[bytes], scope: Scope) -> Any:
            chunks, size = [], 0
            async for chunk in stream:
                size += len(chunk)
                if size > max_bytes:
                    raise too_large()
                chunks.append(chunk)
            raw = b"".join(chunks)
            if not raw.strip():
                return None
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise _not_json(exc) from None
            scope[BODY_SCOPE_KEY] = body
            return body

        def _validate(self, body: Any) -> None:
            if body is None:
                if self._required:
                    raise ApiError(
                        400,
                        "bad-input",
                        "This request needs a JSON body.",
                        [{"path": "$", "message": "is required"}],
                    )
                return
            validator = SchemaValidator(self._schema, format_checker=FORMAT_CHECKER)
            errors = sorted(
                validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path))
            )
            if errors:
                raise _invalid(errors)

    return BoundedJSONBodyValidator
