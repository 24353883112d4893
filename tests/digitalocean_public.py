"""DigitalOcean's public OpenAPI description of the `/v2` operation (a bundled fixture), as a judge
of answers: every way an answer breaks what it declares for the answer's status."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import httpx
import yaml

from evalmock.contract.schemas import deref, inline_refs, schema_errors

SPEC_PATH = Path(__file__).parent / "fixtures" / "digitalocean-public-get-evaluation-test-case.yaml"
OPERATION_PATH = "/v2/gen-ai/evaluation_test_cases/{test_case_uuid}"


@functools.cache
def spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))


def declared_response(status: int) -> dict[str, Any]:
    """The response DigitalOcean's description declares for this status, else its `default`."""
    responses = spec()["paths"][OPERATION_PATH]["get"]["responses"]
    return deref(spec(), responses.get(str(status)) or responses["default"])


def body_errors(status: int, body: Any) -> list[str]:
    """Every way `body` breaks the schema DigitalOcean's description gives this status."""
    schema = inline_refs(spec(), declared_response(status)["content"]["application/json"]["schema"])
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(body)'}: {error.message}"
        for error in schema_errors(spec(), schema, body)
    ]


def answer_errors(response: httpx.Response) -> list[str]:
    """Every way an answer breaks DigitalOcean's description: its media type, its body, and the
    declared headers it carries (integers, when present; the description requires none)."""
    declared = declared_response(response.status_code)
    problems = []
    media_type = response.headers.get("content-type", "").split(";")[0].strip()
    if media_type not in declared["content"]:
        problems.append(f"content-type {media_type!r} is not {sorted(declared['content'])}")
    for name, header in declared.get("headers", {}).items():
        value = response.headers.get(name)
        schema = inline_refs(spec(), deref(spec(), header)["schema"])
        if value is not None and schema["type"] == "integer" and not value.lstrip("-").isdigit():
            problems.append(f"header {name}: {value!r} is not an integer")
    return problems + body_errors(response.status_code, response.json())
