"""Reading a document's operations: the HTTP methods, each (path, method, operation), and `$ref`s followed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalmock.contract.schemas import RefError, resolve_pointer

# The methods a path item may hold an operation under (OpenAPI 3.0 "Path Item Object").
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_HOPS = 64  # a reference chain longer than this is a cycle


def iter_operations(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every operation as (path template, lower-case method, operation object), path by path."""
    for path, item in (spec.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        for method in HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                yield path, method, operation


def deref(spec: Mapping[str, Any], node: Any) -> Any:
    """Follow local `$ref`s until a node that is not a reference (RefError when one names nothing)."""
    for _ in range(MAX_HOPS):
        if not (isinstance(node, Mapping) and "$ref" in node):
            return node
        node = resolve_pointer(spec, node["$ref"])
    raise RefError(f"references chain more than {MAX_HOPS} deep (a cycle?)")
