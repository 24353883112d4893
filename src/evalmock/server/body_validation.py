"""Request bodies: Connexion's JSON body validator, bounded in size, naming every mistake at its
JSON path, and handing the parsed body to the handler (dispatch.py)."""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
from connexion.validators.json import JSONRequestBodyValidator
from jsonschema import ValidationError
from starlette.types import Receive, Scope

from evalmock.contract.spelling import closest
from evalmock.nouns import counted
from evalmock.server.errors import MAX_ECHO, ApiError, bad_input, echo
from evalmock.server.validation import FORMAT_CHECKER, SchemaValidator, describe

# Where a validated request's JSON body waits for its handler (None: no body).
BODY_SCOPE_KEY = "evalmock.body"
MAX_BODY_MISTAKES = 50  # listed in one 400
SUMMARIZED = 3  # of them, said in its message too


def json_path(parts: Any) -> str:
    """A place in a JSON body as a JSONPath (`$.data.testSet[0].id`), each key cut at MAX_ECHO
    characters, as a client may name a key at will."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif len(str(part)) <= MAX_ECHO and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            path += f".{part}"
        else:
            path += f"[{orjson.dumps(str(part)[:MAX_ECHO]).decode()}]"
    return path


def _unknown_field(name: str, schema: dict[str, Any]) -> str:
    """Why `name` is refused, and what was likely meant: a close field of this object, or a field
    of one of its objects (`page` written beside `match` instead of in it)."""
    fields = schema.get("properties", {})
    takes = f"this object takes: {', '.join(fields) or 'none'}"
    guess = closest(name, fields)
    if guess:
        return f"unknown field; did you mean {echo(guess)}? ({takes})"
    for outer, inner in fields.items():
        if isinstance(inner, dict) and name in inner.get("properties", {}):
            return (
                f"unknown field here; it goes inside {echo(outer)}: "
                f'{{"{outer}": {{"{name}": ...}}}} ({takes})'
            )
    return f"unknown field; {takes}"


def _unknown_names(error: ValidationError) -> list[str]:
    return sorted(set(map(str, error.instance)) - set(error.schema.get("properties", {})))


def _body_mistakes(error: ValidationError) -> Iterator[dict[str, str]]:
    """Each mistake of one error: an unknown field each, at its own path."""
    path = json_path(error.absolute_path)
    if error.validator == "additionalProperties":
        for name in _unknown_names(error):
            yield {
                "path": json_path([*error.absolute_path, name]),
                "message": _unknown_field(name, error.schema),
            }
    elif error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "a field"
        yield {"path": json_path([*error.absolute_path, missing]), "message": "is required"}
    elif error.validator == "maxProperties":
        yield {"path": path, "message": f"must have at most {error.validator_value} fields"}
    elif error.validator == "type":
        said = describe(error, error.schema)
        yield {"path": path, "message": f"{said}, received {_json_kind(error.instance)}"}
    else:
        yield {"path": path, "message": describe(error, error.schema)}


def _json_kind(value: Any) -> str:
    """A JSON value as a message names it: `the string '2'`, `true`, `an object`."""
    if isinstance(value, str):
        return f"the string {echo(value)}"
    if isinstance(value, bool) or value is None:
        return orjson.dumps(value).decode()
    if isinstance(value, int | float):
        return f"the number {str(value)[:MAX_ECHO]}"
    return "an array" if isinstance(value, list) else "an object"


def _mistake_count(error: ValidationError) -> int:
    return len(_unknown_names(error)) if error.validator == "additionalProperties" else 1


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
    # only the listed mistakes are worded: a body may hold thousands of unknown fields
    every = itertools.chain.from_iterable(map(_body_mistakes, errors))
    mistakes = list(itertools.islice(every, MAX_BODY_MISTAKES))
    found = sum(map(_mistake_count, errors))
    more = found - len(mistakes)
    summary = "; ".join(f"{m['path']}: {m['message']}" for m in mistakes[:SUMMARIZED])
    rest = len(mistakes) - SUMMARIZED
    return ApiError(
        400,
        "bad-input",
        f"The body is not valid ({counted(found, 'mistake')}"
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
