"""Near misses of a parameter, derived from its schema in the document: requests just outside what
it allows.

Each probe is a value the schema refuses that differs from an allowed one by little: a letter-case
variant of an enum value or of a patterned example, a trailing, leading or doubled separator, one
character too few or too many, a stray character; a number just outside the bounds or not a whole
number; a required parameter left out. A candidate the schema would accept is dropped, so every
probe is outside the document; a changed document changes the probes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from evalmock.contract.schemas import schema_validator

_SEPARATORS = ",;:-_./|"


@dataclass(frozen=True)
class Probe:
    """One near miss: the parameter, what is wrong with it, and the value to send (None: leave it
    out)."""

    parameter: str
    what: str
    value: str | None


def near_misses(spec: Mapping[str, Any], parameter: Mapping[str, Any]) -> list[Probe]:
    """Every near miss of one declared parameter (`spec` resolves references in its schema)."""
    name, schema = parameter["name"], parameter.get("schema", {})
    validator = schema_validator(spec, schema)
    probes = [Probe(name, "left out", None)] if parameter.get("required") else []
    seen: set[str] = set()
    for what, value in _candidates(schema, parameter.get("example", schema.get("example"))):
        if value not in seen and not _allowed(validator, schema, value):
            seen.add(value)
            probes.append(Probe(name, what, value))
    return probes


def _candidates(schema: Mapping[str, Any], example: Any) -> Iterator[tuple[str, str]]:
    kind = schema.get("type")
    if kind in ("integer", "number"):
        if "minimum" in schema:
            yield "just below the minimum", str(schema["minimum"] - 1)
        if "maximum" in schema:
            yield "just above the maximum", str(schema["maximum"] + 1)
        yield "a word", "ten"
        if kind == "integer":
            yield "not a whole number", "2.5"
        return
    bases = [str(v) for v in schema.get("enum", [])] or (
        [str(example)] if example is not None else []
    )
    for base in bases:
        yield f"{base!r} in upper case", base.upper()
        yield f"{base!r} in title case", base.title()
        yield f"{base!r} in lower case", base.lower()
        for separator in _separators(schema.get("pattern", ""), base):
            yield f"{base!r} with a trailing {separator!r}", base + separator
            yield f"{base!r} with a leading {separator!r}", separator + base
            yield (
                f"{base!r} with a doubled {separator!r}",
                base.replace(separator, separator * 2, 1),
            )
        if len(base) > 1:
            yield f"{base!r} one character short", base[:-1]
        yield f"{base!r} one character long", base + base[-1:]
        yield f"{base!r} with a stray character", base[:1] + "!" + base[1:]
    if schema.get("enum"):
        yield "an unknown word", "archived"


def _separators(pattern: str, base: str) -> list[str]:
    """Separator characters the pattern spells literally (outside character classes) and the example
    uses."""
    literal = re.sub(r"\[[^\]]*\]", "", pattern)
    return [c for c in _SEPARATORS if c in literal and c in base]


def _allowed(validator: Any, schema: Mapping[str, Any], text: str) -> bool:
    value: Any = text
    if schema.get("type") == "integer":
        if not re.fullmatch(r"-?[0-9]+", text):
            return False
        value = int(text)
    elif schema.get("type") == "number":
        try:
            value = float(text)
        except ValueError:
            return False
    return bool(validator.is_valid(value))
