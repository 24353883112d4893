"""The registry of API documents: each API's name, file and base path, loaded once, whole or as the
pages state it."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalmock.contract.schemas import deref

# LibYAML's parser reads a document ten times faster; both build the same objects (SafeConstructor)
try:
    from yaml import CSafeLoader as SafeLoader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader  # type: ignore[assignment]
from evalmock.paths import openapi_dir

# Marks the parts of a document that state a fact of DigitalOcean's live service rather than of its
# page.
LEVEL_MARK = "x-evalmock-level"
# Marks an enum that lists the values its page knew, not every value a service may send
# (DigitalOcean adds values to its enums): the document the audit judges by leaves the list out, and
# an inferred rule judges that a value is a listed one.
OPEN_ENUM = "x-evalmock-open-enum"
# Facts of a query parameter that its schema cannot state (docs/contract.md); evalmock reads them,
# the served document leaves them out.
QUERY_FACTS = "x-evalmock-query"
# Every extension starting so is the audit's own (levels, query facts, notes on its profiles).
OURS = "x-evalmock-"


@dataclass(frozen=True)
class ApiDocument:
    """One API: a short name used on the command line, its document file, and its base path."""

    name: str
    filename: str
    title: str

    @property
    def path(self) -> Path:
        return openapi_dir() / self.filename

    @property
    def spec(self) -> dict[str, Any]:
        return load_document(self.path)

    @property
    def page_spec(self) -> dict[str, Any]:
        """The document as its reference page alone states it (see `page_view`)."""
        return _page_view_of(self.path)

    def judged_spec(self, *, live: bool) -> dict[str, Any]:
        """The document an audit judges answers by: the page view (the whole document in the live
        profile), its open enums without their lists (see `without_open_enums`)."""
        return _judged_view_of(self.path, live)

    def open_enums(self) -> dict[str, tuple[str, ...]]:
        """Each open enum's schema name and the values it lists."""
        schemas = self.spec.get("components", {}).get("schemas", {})
        return {
            name: tuple(str(v) for v in schema.get("enum", ()))
            for name, schema in schemas.items()
            if isinstance(schema, Mapping) and schema.get(OPEN_ENUM) is True
        }

    def served_spec(self) -> dict[str, Any]:
        """A copy of the document as the mock serves it (Swagger UI shows it to frontend
        developers): without the audit's own marks (LEVEL_MARK, QUERY_FACTS, every OURS key)."""
        return _without_ours(self.spec)

    @property
    def base_path(self) -> str:
        """The path prefix from the document's first server, e.g. `/v1`."""
        return self.spec["servers"][0]["url"].rstrip("/")


TEST_SET = ApiDocument(
    "test-set",
    "agent-test-set.yaml",
    "Agent test set (GET /v1/agents/{agentId}/test-set/cases)",
)
GRADIENT = ApiDocument(
    "gradient",
    "gradient-evaluation-test-cases.yaml",
    "DigitalOcean GenAI (GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid})",
)
APIS: dict[str, ApiDocument] = {api.name: api for api in (TEST_SET, GRADIENT)}
# evalmock's own admin API (sessions, faults, the journal): served by the mock, never audited, so
# not one of APIS.
ADMIN = ApiDocument("admin", "evalmock-admin.yaml", "evalmock admin API (/__evalmock)")


def api(name: str) -> ApiDocument:
    try:
        return APIS[name]
    except KeyError:
        raise ValueError(f"unknown API {name!r}; choose from {', '.join(APIS)}") from None


@functools.cache
def load_document(path: Path) -> dict[str, Any]:
    """Parse a YAML or JSON document once; callers must not mutate the result (copy it for those
    that do)."""
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=SafeLoader)


def is_live(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get(LEVEL_MARK) == "live"


def page_view(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `spec` without what only DigitalOcean's live service states: a response marked live
    keeps only its description (its status stays documented, its body and headers become
    unspecified), and any other node marked live (such as a header) is left out, wherever it is
    referenced from."""

    def prune(node: Any, parent_key: str | None) -> Any:
        if isinstance(node, Mapping):
            kept: dict[str, Any] = {}
            for key, value in node.items():
                target = deref(spec, value)
                if is_live(target):
                    if parent_key == "responses":
                        kept[key] = {"description": target.get("description", "")}
                    continue
                kept[key] = prune(value, key)
            return kept
        if isinstance(node, list):
            return [prune(item, parent_key) for item in node]
        return copy.deepcopy(node)

    return prune(spec, None)


@functools.cache
def _page_view_of(path: Path) -> dict[str, Any]:
    return page_view(load_document(path))


def _without_ours(node: Any) -> Any:
    """A copy of `node` without the keys starting with OURS, at any depth."""
    if isinstance(node, dict):
        return {
            key: _without_ours(value)
            for key, value in node.items()
            if not (isinstance(key, str) and key.startswith(OURS))
        }
    if isinstance(node, list):
        return [_without_ours(item) for item in node]
    return node  # a scalar: nothing to edit in place


def without_open_enums(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `spec` in which every schema marked OPEN_ENUM is a plain string of its type: a
    value it does not list is then no breach of the document, only of the inferred rule."""

    def strip(node: Any) -> Any:
        if isinstance(node, Mapping):
            open_enum = node.get(OPEN_ENUM) is True
            return {k: strip(v) for k, v in node.items() if not (open_enum and k == "enum")}
        if isinstance(node, list):
            return [strip(item) for item in node]
        return copy.deepcopy(node)

    return strip(spec)


@functools.cache
def _judged_view_of(path: Path, live: bool) -> dict[str, Any]:
    return without_open_enums(load_document(path) if live else _page_view_of(path))
