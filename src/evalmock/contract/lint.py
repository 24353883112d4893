"""Our own lint of the contract: rules the OpenAPI meta-schema cannot state, each a small named
function."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from jsonschema.exceptions import SchemaError, UnknownType

from evalmock.contract.operations import iter_operations
from evalmock.contract.schemas import RefError, deref, resolve_pointer, schema_errors

# A finding: (JSON pointer into the document, message).
Finding = tuple[str, str]
Rule = Callable[[Mapping[str, Any]], Iterator[Finding]]


def pointer(*parts: object) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def walk(node: Any, path: tuple[object, ...] = ()) -> Iterator[tuple[tuple[object, ...], Any]]:
    """Every (path, value) pair in the document, depth first."""
    yield path, node
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from walk(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, (*path, index))


def refs_resolve(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """Every `$ref` names something that exists in the document."""
    for path, node in walk(spec):
        if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            try:
                resolve_pointer(spec, node["$ref"])
            except RefError as exc:
                yield pointer(*path), str(exc)


def openapi_version_is_30(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """The document is OpenAPI 3.0.x: Connexion 3 cannot load 3.1."""
    version = str(spec.get("openapi", ""))
    if not re.fullmatch(r"3\.0\.\d+", version):
        yield (
            "/openapi",
            f"expected OpenAPI 3.0.x (Connexion 3 cannot load other versions), got {version!r}",
        )


def patterns_are_anchored_regexes(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """Every `pattern` compiles and is anchored `^…$` (validators search, they do not match whole
    strings)."""
    for path, node in walk(spec):
        if path and path[-1] == "pattern" and isinstance(node, str) and _in_schema(path):
            try:
                re.compile(node)
            except re.error as exc:
                yield pointer(*path), f"pattern {node!r} is not a valid regular expression: {exc}"
                continue
            if not (node.startswith("^") and node.endswith("$")):
                yield pointer(*path), f"pattern {node!r} must be anchored with ^ and $"


def operations_have_unique_ids(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """Every operation has an operationId, and no two share one (links and handlers use them)."""
    seen: dict[str, str] = {}
    for path, method, operation in iter_operations(spec):
        where = pointer("paths", path, method)
        op_id = operation.get("operationId")
        if not op_id:
            yield where, "operation has no operationId"
        elif op_id in seen:
            yield where + "/operationId", f"operationId {op_id!r} is also used at {seen[op_id]}"
        else:
            seen[op_id] = where


def examples_match_schemas(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """Every example and default validates against the schema it illustrates."""
    for where, schema, value in _examples(spec):
        try:
            errors = list(schema_errors(spec, schema, value))
        except (RefError, SchemaError, UnknownType) as exc:
            # A broken schema is reported by the spec validator; here it only means "cannot check".
            yield (
                where,
                f"cannot check the example, its schema is broken: {str(exc).splitlines()[0]}",
            )
            continue
        for error in errors:
            inner = "".join(f"/{p}" for p in error.absolute_path)
            yield where + inner, f"example does not match its schema: {error.message}"


def links_name_known_operations(spec: Mapping[str, Any]) -> Iterator[Finding]:
    """Every link targets an existing operationId and only parameters that operation declares."""
    operations = {op.get("operationId"): (path, op) for path, _, op in iter_operations(spec)}
    for path, method, operation in iter_operations(spec):
        for status, response in (operation.get("responses") or {}).items():
            response = deref(spec, response)
            for name, link in (response.get("links") or {}).items():
                where = pointer("paths", path, method, "responses", status, "links", name)
                target = operations.get(link.get("operationId"))
                if target is None:
                    yield where, f"link targets unknown operationId {link.get('operationId')!r}"
                    continue
                declared = {p.get("name") for p in _parameters(spec, *target)}
                for parameter in link.get("parameters") or {}:
                    if parameter.split(".")[-1] not in declared:
                        yield (
                            where + pointer("parameters", parameter),
                            (f"parameter {parameter!r} is not declared by {link['operationId']!r}"),
                        )


RULES: tuple[Rule, ...] = (
    openapi_version_is_30,
    patterns_are_anchored_regexes,
    operations_have_unique_ids,
    examples_match_schemas,
    links_name_known_operations,
)


def lint(spec: Mapping[str, Any]) -> list[Finding]:
    """Run every rule; reference problems first, since the other rules need references to
    resolve."""
    broken_refs = list(refs_resolve(spec))
    if broken_refs:
        return broken_refs
    return [finding for rule in RULES for finding in rule(spec)]


def _in_schema(path: tuple[object, ...]) -> bool:
    # `pattern` is a schema keyword; elsewhere (e.g. a property named "pattern") it is just a name.
    return len(path) < 2 or path[-2] != "properties"


def _parameters(
    spec: Mapping[str, Any], path: str, operation: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    item = spec["paths"][path]
    return [
        deref(spec, p)
        for p in [*(item.get("parameters") or []), *(operation.get("parameters") or [])]
    ]


def _examples(spec: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """(pointer, schema, value) for each example or default that illustrates a schema."""
    for path, node in walk(spec):
        if not isinstance(node, Mapping):
            continue
        schema = node.get("schema")
        is_holder = schema is not None and (
            path[-2:-1] == ("content",) or "in" in node or _is_header(path)
        )
        if is_holder:
            if "example" in node:
                yield pointer(*path, "example"), schema, node["example"]
            for name, example in (node.get("examples") or {}).items():
                example = deref(spec, example)
                if isinstance(example, Mapping) and "value" in example:
                    yield pointer(*path, "examples", name, "value"), schema, example["value"]
        if _looks_like_schema(path) and "$ref" not in node:
            for keyword in ("example", "default"):
                if keyword in node:
                    yield pointer(*path, keyword), dict(node), node[keyword]


def _is_header(path: tuple[object, ...]) -> bool:
    return len(path) >= 2 and path[-2] == "headers"


def _looks_like_schema(path: tuple[object, ...]) -> bool:
    return bool(path) and (
        path[-1] == "schema"
        or path[-1] == "items"
        or (len(path) >= 2 and path[-2] in ("properties", "schemas"))
    )
