"""Validate instances against schemas taken from an OpenAPI 3.0 document, with its `$ref`s
resolved."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from jsonschema.exceptions import ValidationError

if TYPE_CHECKING:
    from openapi_schema_validator import OAS30Validator


class RefError(LookupError):
    """A `$ref` that names nothing in the document."""


def pointer_tokens(pointer: str) -> list[str]:
    """The reference tokens of a JSON Pointer (RFC 6901), unescaped: `/a~1b/0` -> ["a/b", "0"]."""
    return [raw.replace("~1", "/").replace("~0", "~") for raw in pointer.split("/")[1:]]


def value_at(document: Any, pointer: str) -> Any:
    """What a JSON Pointer (RFC 6901, `""` the whole document) finds in a document; KeyError when it
    finds nothing."""
    node = document
    for part in pointer_tokens(pointer):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(pointer)
    return node


def resolve_pointer(spec: Mapping[str, Any], ref: str) -> Any:
    """Follow a local reference such as `#/components/schemas/Case`."""
    if not ref.startswith("#/"):
        raise RefError(f"only local references are supported, got {ref!r}")
    try:
        return value_at(spec, ref[1:])
    except KeyError:
        raise RefError(f"$ref {ref!r} points to nothing") from None


MAX_HOPS = 64  # a reference chain longer than this is a cycle


def deref(spec: Mapping[str, Any], node: Any) -> Any:
    """Follow local `$ref`s until a node that is not a reference (RefError when one names
    nothing)."""
    for _ in range(MAX_HOPS):
        if not (isinstance(node, Mapping) and "$ref" in node):
            return node
        node = resolve_pointer(spec, node["$ref"])
    raise RefError(f"references chain more than {MAX_HOPS} deep (a cycle?)")


def inline_refs(spec: Mapping[str, Any], node: Any, depth: int = 0) -> Any:
    """A copy of `node` with every local `$ref` replaced by what it names (our schemas are not
    recursive)."""
    if depth > 64:
        raise RefError("references nest more than 64 deep (a cycle?)")
    if isinstance(node, Mapping):
        if "$ref" in node:
            return inline_refs(spec, resolve_pointer(spec, node["$ref"]), depth + 1)
        return {key: inline_refs(spec, value, depth + 1) for key, value in node.items()}
    if isinstance(node, list):
        return [inline_refs(spec, item, depth + 1) for item in node]
    return node


def schema_validator(spec: Mapping[str, Any], schema: Any) -> OAS30Validator:
    """A validator for `schema` (OpenAPI 3.0 dialect, formats checked); build it once to check many
    instances."""
    # Imported here: openapi-schema-validator imports pydantic-settings (0.1 s, 8 MiB), which a
    # server whose fixtures are known valid (world/start_cache.py) never needs.
    from openapi_schema_validator import OAS30Validator, oas30_format_checker

    return OAS30Validator(inline_refs(spec, schema), format_checker=oas30_format_checker)


def schema_errors(spec: Mapping[str, Any], schema: Any, instance: Any) -> Iterator[ValidationError]:
    """Every way `instance` fails `schema` (OpenAPI 3.0 dialect, formats checked)."""
    yield from schema_validator(spec, schema).iter_errors(instance)


def component_schema(spec: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`#/components/schemas/<name>` with its references inlined, ready for a validator."""
    return inline_refs(spec, spec["components"]["schemas"][name])


@functools.cache
def ecma_regex(pattern: str) -> re.Pattern[str]:
    """A schema `pattern` as JSON Schema (ECMA-262) reads it: `$` ends the text, never before a
    final newline."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """The `pattern` keyword for jsonschema validators (`validators.extend`), matched with
    `ecma_regex`."""
    if validator.is_type(instance, "string") and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")
