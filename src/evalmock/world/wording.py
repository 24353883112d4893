"""How a problem in a case or data file is worded: values in JSON's spelling, and what to write instead.

A data file is JSON or YAML, and JSON's spelling (`false`, `null`, `"text"`, `[1, 2]`) reads the same in
both (YAML's flow style is JSON's), so a message never shows Python's (`False`, `None`, `'text'`).
"""

from __future__ import annotations

import ast
import json
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from evalmock.contract.spelling import closest

MAX_SHOWN = 80  # characters of a value shown in a message
_SIZES = {"Length": "characters", "Properties": "properties", "Items": "items"}  # minLength/maxLength, ...
_TYPES = {
    "string": "text (a string)", "integer": "a whole number", "number": "a number", "boolean": "true or false",
    "object": "an object of keys and values", "array": "a list", "null": "null",
}
_FORMATS = {
    "uuid": "a UUID such as \"0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b\"",
    "date-time": "an RFC 3339 date-time such as \"2026-11-20T09:15:02Z\"",
    "uint64": "a whole number from 0 to 18446744073709551615, written as a string such as \"1234\"",
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
    validator, wanted, instance, schema = error.validator, error.validator_value, error.instance, error.schema
    got = f"got {shown(instance)}"
    for size, unit in _SIZES.items():
        if validator in (f"min{size}", f"max{size}"):
            low, high = schema.get(f"min{size}"), schema.get(f"max{size}")
            bounds = f"{low}..{high}" if low is not None and high is not None else (
                f"at least {low}" if high is None else f"at most {high}"
            )
            return f"has {len(instance)} {unit}, must have {bounds}"
    if validator in ("type", "nullable"):  # OpenAPI 3.0 refuses null with its own keyword
        return f"expected {_FORMATS.get(schema.get('format'), expected_type(schema))}, {got}"
    if validator == "enum":
        guess = closest(instance, [str(option) for option in wanted]) if isinstance(instance, str) else None
        hint = f"; did you mean {shown(guess)}?" if guess else ""
        return f"expected one of {', '.join(map(shown, wanted))}, {got}{hint}"
    if validator == "required":
        key = _required_key(error)
        return f"{shown(key)} is missing; add it, it is required here" if key else error.message
    if validator in ("format", "pattern") and schema.get("format") in _FORMATS:
        return f"expected {_FORMATS[schema['format']]}, {got}"
    if validator == "pattern" and wanted == _JSON_POINTER:
        return f"expected a JSON Pointer (RFC 6901) such as \"/matches/2\", {got}"
    if validator == "pattern":
        return f"expected text matching {wanted}, {got}"
    if validator == "minimum":
        return f"expected at least {wanted}, {got}"
    if validator == "maximum":
        return f"expected at most {wanted}, {got}"
    if validator == "anyOf" and all(set(branch) == {"required"} for branch in wanted):
        parts = [key for branch in wanted for key in branch["required"]]
        return f"needs at least one of {', '.join(parts)}, {got}"
    if validator in ("anyOf", "oneOf") and error.context:
        return described(best_match(error.context))
    return error.message


def _required_key(error: ValidationError) -> str | None:
    """The missing key of a `required` error (jsonschema names it only in its message, as a repr)."""
    try:
        key = ast.literal_eval(error.message.removesuffix(" is a required property"))
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None
