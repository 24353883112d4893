"""Each API's one operation as its document declares it: id, method, path template, label."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import iter_operations


@dataclass(frozen=True)
class Operation:
    api: str
    operation_id: str
    method: str  # upper case
    path: str  # the document's path template, without the base path
    base_path: str  # "/v1", "/v2"

    @property
    def label(self) -> str:
        """`GET /v1/agents/{agentId}/test-set/cases`: how reports name the operation."""
        return f"{self.method} {self.base_path}{self.path}"

    def path_parameters(self, path: str) -> dict[str, str] | None:
        """The decoded path parameters of a request path to this operation (behind any prefix of the base URL),
        or None when the path is not one of this operation's."""
        match = _template_pattern(self.base_path + self.path).search(path)
        return None if match is None else {name: unquote(value) for name, value in match.groupdict().items()}

    def url_path(self, **params: str) -> str:
        """The full path with path parameters filled in, each percent-encoded as one segment."""
        path = self.path
        for name, value in params.items():
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        return self.base_path + path


@functools.cache
def operation(api: str) -> Operation:
    """The single operation of an API document (each of ours declares exactly one)."""
    document = api_document(api)
    found = [(path, method, spec["operationId"]) for path, method, spec in iter_operations(document.spec)]
    if len(found) != 1:
        raise ValueError(f"{document.filename}: expected one operation, found {len(found)}")
    path, method, operation_id = found[0]
    return Operation(api, operation_id, method.upper(), path, document.base_path)


def api_of_operation_id(operation_id: str | None) -> str | None:
    for name in ("test-set", "gradient"):
        if operation(name).operation_id == operation_id:
            return name
    return None


@functools.cache
def _template_pattern(template: str) -> re.Pattern[str]:
    """A path template as a regular expression matching the end of a path, one segment per parameter."""
    parts = re.split(r"\{([^}]+)\}", template)
    pattern = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts))
    return re.compile(pattern + "$")
