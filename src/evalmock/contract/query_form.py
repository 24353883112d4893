"""A request's query judged by its operation's parameters: each value of the form its schema states
(a whole number within its bounds, one of an enum, matching a pattern), each required one sent.

What a client sends is hostile text: a value is compared, never evaluated, and a number is read
only when it is written in ASCII digits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalmock.contract.documents import QUERY_FACTS
from evalmock.contract.operations import Operation

_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)
_WHOLE = re.compile(r"-?[0-9]+")


def form_problems(
    found: Operation, query: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str | None]]:
    """Each query parameter of the operation that is missing (when required) or not of its
    schema's form, as (name, what the schema asks, the value sent, None when none was); an
    empty value of a parameter whose `x-evalmock-query` says `empty-value: open` is left alone."""
    problems: list[tuple[str, str, str | None]] = []
    for name, parameter in found.query_parameters().items():
        open_empty = parameter.get(QUERY_FACTS, {}).get("empty-value") == "open"
        values = [value for key, value in query if key == name]
        if not values and parameter.get("required"):
            problems.append((name, "sent (it is required)", None))
        for value in values:
            if value == "" and open_empty:
                continue
            asked = form_problem(parameter.get("schema") or {}, value)
            if asked is not None:
                problems.append((name, asked, value))
    return problems


def form_problem(schema: dict[str, Any], value: str) -> str | None:
    """What the schema asks that `value` (as sent in a query) is not, or None."""
    if schema.get("type") == "integer":
        low, high = _INT32 if schema.get("format") == "int32" else _INT64
        if not _WHOLE.fullmatch(value):
            return f"a whole number ({schema.get('format', 'integer')})"
        low = max(low, schema.get("minimum", low))
        high = min(high, schema.get("maximum", high))
        if not low <= int(value) <= high:
            return f"a whole number {low}..{high}"
        return None
    if "enum" in schema and value not in schema["enum"]:
        return "one of " + ", ".join(str(member) for member in schema["enum"])
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return "a UUID" if schema.get("format") == "uuid" else f"matching {schema['pattern']}"
    return None
