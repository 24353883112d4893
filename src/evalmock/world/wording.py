"""How a problem in a case or data file is worded: values in JSON's spelling, and what to write
instead.

A data file is JSON or YAML, and JSON's spelling (`false`, `null`, `"text"`, `[1, 2]`) reads the
same in both (YAML's flow style is JSON's), so a message never shows Python's (`False`, `None`,
`'text'`).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from evalmock.contract.spelling import closest

MAX_SHOWN = 80  # characters of a value shown in a message
# minLength/maxLength, ...
_SIZES = {
    "Length": "characters",
    "Properties": "properties",
    "Items": "items",
}
_TYPES = {
    "string": "text (a string)",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object of keys and values",
    "array": "a list",
    "null": "null",
}
_FORMATS = {
    "uuid": 'a UUID such as "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b"',
    "date-time": 'an RFC 3339 date-time such as "2026-11-20T09:15:02Z"',
    "uint64": 'a whole number from 0 to 18446744073709551615, written as a string such as "1234"',
}
_JSON_POINTER = "^(/([^~/]|~[01])*)*$"


def shown(value: Any) -> str:
    """`value` as JSON writes it, cut short when long."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def expected_type(schema: Any) -> str:
    """The JSON type (or types) a schema asks for, in words."""
    types = schema.get("type") if isinstance(schema, dict) else None
    names = types if isinstance(types, list) else [types]
    return " or ".join(_TYPES.get(name, str(name)) for name in names if name)


def described(error: ValidationError) -> str:
    """A schema error in words: what is expected (and so what to write), and what the file holds."""
    describe = _DESCRIBERS.get(error.validator)
    said = _size(error) if describe is None else describe(error, f"got {shown(error.instance)}")
    return error.message if said is None else said


def _size(error: ValidationError) -> str | None:
    for size, unit in _SIZES.items():
        if error.validator in (f"min{size}", f"max{size}"):
            low, high = error.schema.get(f"min{size}"), error.schema.get(f"max{size}")
            bounds = (
                f"{low}..{high}"
                if low is not None and high is not None
                else (f"at least {low}" if high is None else f"at most {high}")
            )
            return f"has {len(error.instance)} {unit}, must have {bounds}"
    return None


def _type(error: ValidationError, got: str) -> str:
    return (
        f"expected {_FORMATS.get(error.schema.get('format'), expected_type(error.schema))}, {got}"
    )


def _enum(error: ValidationError, got: str) -> str:
    wanted, instance = error.validator_value, error.instance
    guess = (
        closest(instance, [str(option) for option in wanted]) if isinstance(instance, str) else None
    )
    hint = f"; did you mean {shown(guess)}?" if guess else ""
    return f"expected one of {', '.join(map(shown, wanted))}, {got}{hint}"


def _required(error: ValidationError, got: str) -> str | None:
    key = _required_key(error)
    return f"{shown(key)} is missing; add it, it is required here" if key else None


def _format(error: ValidationError, got: str) -> str | None:
    if error.schema.get("format") in _FORMATS:
        return f"expected {_FORMATS[error.schema['format']]}, {got}"
    return None


def _pattern(error: ValidationError, got: str) -> str:
    if (formatted := _format(error, got)) is not None:
        return formatted
    if error.validator_value == _JSON_POINTER:
        return f'expected a JSON Pointer (RFC 6901) such as "/matches/2", {got}'
    return f"expected text matching {error.validator_value}, {got}"


def _alternatives(error: ValidationError, got: str) -> str | None:
    wanted = error.validator_value
    if error.validator == "anyOf" and all(set(branch) == {"required"} for branch in wanted):
        parts = [key for branch in wanted for key in branch["required"]]
        return f"needs at least one of {', '.join(parts)}, {got}"
    return described(best_match(error.context)) if error.context else None


# Per validator, its error in words (None: jsonschema's own message); OpenAPI 3.0 refuses null with
# `nullable`.
_DESCRIBERS: dict[str, Callable[[ValidationError, str], str | None]] = {
    "type": _type,
    "nullable": _type,
    "enum": _enum,
    "required": _required,
    "format": _format,
    "pattern": _pattern,
    "minimum": lambda error, got: f"expected at least {error.validator_value}, {got}",
    "maximum": lambda error, got: f"expected at most {error.validator_value}, {got}",
    "anyOf": _alternatives,
    "oneOf": _alternatives,
}


def _required_key(error: ValidationError) -> str | None:
    """The missing key of a `required` error (jsonschema names it only in its message, as a
    repr)."""
    try:
        key = ast.literal_eval(error.message.removesuffix(" is a required property"))
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None
