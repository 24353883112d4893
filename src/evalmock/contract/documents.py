"""The registry of API documents: each API's name, file and base path, loaded once."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalmock.paths import openapi_dir


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


def api(name: str) -> ApiDocument:
    try:
        return APIS[name]
    except KeyError:
        raise ValueError(f"unknown API {name!r}; choose from {', '.join(APIS)}") from None


@functools.cache
def load_document(path: Path) -> dict[str, Any]:
    """Parse a YAML or JSON document once; callers must not mutate the result."""
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)
