"""Each API's operation as its document declares it: id, method, path template, parameters and
responses."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from evalmock.contract.documents import APIS, QUERY_FACTS, ApiDocument, is_live
from evalmock.contract.documents import api as api_document
from evalmock.contract.schemas import deref

# The methods a path item may hold an operation under (OpenAPI 3.0 "Path Item Object").
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def iter_operations(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every operation as (path template, lower-case method, operation object), path by path."""
    for path, item in (spec.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        for method in HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                yield path, method, operation


@dataclass(frozen=True)
class Response:
    """One declared response of an operation."""

    status: str  # "200", "404" or "default"
    examples: dict[str, Any]  # named examples of its JSON body: name -> value
    example: Any  # its single `example`, if the document gives one
    # what the document says of it is a fact of DigitalOcean's live service, not of the page
    live: bool
    schema: Any = None  # its JSON body's schema, as the document writes it (a $ref, often)
    headers: tuple[str, ...] = ()  # the names of the headers it declares, in lower case


@dataclass(frozen=True)
class Operation:
    """One operation of an API document, read once: what the server, the harness and the proxy need
    of it."""

    document: ApiDocument
    operation_id: str
    method: str  # upper case
    path: str  # the document's path template, without the base path
    # name -> the parameter object (path item's and operation's)
    parameters: dict[str, dict[str, Any]]
    responses: dict[str, Response]

    @property
    def api(self) -> str:
        return self.document.name

    @functools.cached_property
    def base_path(self) -> str:
        # Once: the document's own property finds the documents' folder on every call (tens of
        # microseconds, on every check that asks whether a path is this operation's).
        return self.document.base_path

    @property
    def label(self) -> str:
        """`GET /v1/agents/{agentId}/test-set/cases`: how reports name the operation."""
        return f"{self.method} {self.base_path}{self.path}"

    def query_parameters(self) -> dict[str, dict[str, Any]]:
        return {name: p for name, p in self.parameters.items() if p.get("in") == "query"}

    def query_marked(self, fact: str, value: object = True) -> tuple[str, ...]:
        """The query parameters, in the document's order, whose `x-evalmock-query` states `fact`
        with this value: `narrows` (a filter of the list), `cursor-binds` (a sealed cursor is bound
        to it), `bad-value` (`page` or `inferred`: the level of the 400 a malformed value gets),
        `empty-value` (`open`: the pages leave an empty value open); `set-of`, `case-field` and
        the rest of a filter's facts are read by contract/filters.py."""
        return tuple(
            name
            for name, parameter in self.query_parameters().items()
            if parameter.get(QUERY_FACTS, {}).get(fact) == value
        )

    def bad_value_rule(self, names: set[str]) -> str | None:
        """The rule a 400 to a malformed value of one of `names` counts for, when its parameter's
        `x-evalmock-query` names one (`bad-value-rule`); else None: the check that saw it judges."""
        for name, parameter in self.query_parameters().items():
            rule = parameter.get(QUERY_FACTS, {}).get("bad-value-rule")
            if name in names and rule:
                return str(rule)
        return None

    def page_words(self, name: str) -> tuple[str, ...]:
        """The page's own words stating a query parameter's bounds and default (its
        `x-evalmock-query` `page-words`), which the rules reading those numbers quote: a revision
        of the page changes them in the document, with the numbers."""
        words = self.query_parameters()[name].get(QUERY_FACTS, {}).get("page-words", ())
        return tuple(str(text) for text in words)

    def path_parameters(self, path: str) -> dict[str, str] | None:
        """The decoded path parameters of a request path to this operation (behind any prefix of the
        base URL), or None when the path is not one of this operation's."""
        match = _template_pattern(self.base_path + self.path).search(path)
        return (
            None
            if match is None
            else {name: unquote(value) for name, value in match.groupdict().items()}
        )

    def url_path(self, **params: str) -> str:
        """The full path with path parameters filled in, each percent-encoded as one segment."""
        path = self.path
        for name, value in params.items():
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        return self.base_path + path

    @property
    def has_default(self) -> bool:
        return "default" in self.responses

    def declares(self, status: int) -> bool:
        """A status the operation lists, or (with a `default` response) any error status."""
        return str(status) in self.responses or (self.has_default and 400 <= status <= 599)

    def response_for(self, status: int) -> Response | None:
        return self.responses.get(str(status)) or (
            self.responses.get("default") if self.declares(status) else None
        )


def _response(spec: dict[str, Any], status: str, node: Any) -> Response:
    response = deref(spec, node)
    body = response.get("content", {}).get("application/json", {})
    examples = {
        name: deref(spec, value).get("value") for name, value in body.get("examples", {}).items()
    }
    return Response(
        status=status,
        examples=examples,
        example=body.get("example"),
        live=is_live(response),
        schema=body.get("schema"),
        headers=tuple(str(name).lower() for name in response.get("headers", {})),
    )


@functools.cache
def operations() -> dict[str, Operation]:
    """operationId -> Operation, for every operation of every API."""
    found: dict[str, Operation] = {}
    for document in APIS.values():
        spec = document.spec
        for path, method, raw in iter_operations(spec):
            declared = [
                deref(spec, p)
                for p in [*spec["paths"][path].get("parameters", []), *raw.get("parameters", [])]
            ]
            responses = {
                str(status): _response(spec, str(status), node)
                for status, node in raw.get("responses", {}).items()
            }
            found[raw["operationId"]] = Operation(
                document,
                raw["operationId"],
                method.upper(),
                path,
                {p["name"]: p for p in declared},
                responses,
            )
    return found


@functools.cache
def operation(api: str) -> Operation:
    """The single operation of an API document (each of ours declares exactly one)."""
    mine = [op for op in operations().values() if op.api == api]
    if len(mine) != 1:
        raise ValueError(f"{api_document(api).filename}: expected one operation, found {len(mine)}")
    return mine[0]


@functools.cache
def _template_pattern(template: str) -> re.Pattern[str]:
    """A path template as a regular expression matching the end of a path, one segment per
    parameter."""
    parts = re.split(r"\{([^}]+)\}", template)
    pattern = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
    )
    return re.compile(pattern + "$")
