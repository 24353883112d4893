"""Lookup tables read once from the documents: each operation's API, declared statuses and named examples."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from evalmock.contract.documents import APIS, ApiDocument
from evalmock.contract.operations import deref, iter_operations


@dataclass(frozen=True)
class Response:
    """One declared response of an operation."""

    status: str  # "200", "404" or "default"
    examples: dict[str, Any]  # named examples of its JSON body: name -> value
    example: Any  # its single `example`, if the document gives one


@dataclass(frozen=True)
class Operation:
    api: ApiDocument
    operation_id: str
    responses: dict[str, Response]

    @property
    def has_default(self) -> bool:
        return "default" in self.responses

    def declares(self, status: int) -> bool:
        """A status the operation lists, or (with a `default` response) any error status."""
        return str(status) in self.responses or (self.has_default and 400 <= status <= 599)

    def response_for(self, status: int) -> Response | None:
        return self.responses.get(str(status)) or (self.responses.get("default") if self.declares(status) else None)


def _response(spec: dict[str, Any], status: str, node: Any) -> Response:
    body = deref(spec, node).get("content", {}).get("application/json", {})
    examples = {name: deref(spec, value).get("value") for name, value in body.get("examples", {}).items()}
    return Response(status=status, examples=examples, example=body.get("example"))


@functools.cache
def operations() -> dict[str, Operation]:
    """operationId -> Operation, for every operation of every API."""
    found: dict[str, Operation] = {}
    for api in APIS.values():
        spec = api.spec
        for _, _, operation in iter_operations(spec):
            responses = {
                str(status): _response(spec, str(status), node)
                for status, node in operation.get("responses", {}).items()
            }
            found[operation["operationId"]] = Operation(api, operation["operationId"], responses)
    return found
