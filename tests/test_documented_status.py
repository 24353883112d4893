"""A response added to the OpenAPI document is the whole change that documents a status: the server
answers it when asked with Prefer, the harness's rules name and judge it, the proxy judges it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalmock.paths import openapi_dir

SCRIPT = Path(__file__).with_name("documented_status.py")
DOCUMENT = "agent-test-set.yaml"
DIGITALOCEAN = "gradient-evaluation-test-cases.yaml"
RUN_TIMEOUT_S = 120

# What a maintainer writes when the page gains a 403 block: the status under the operation's
# responses, and the response with its code in its example (as the other error responses state
# theirs).
STATUS_AFTER = "        '401':\n          $ref: '#/components/responses/Unauthorized'\n"
STATUS = "        '403':\n          $ref: '#/components/responses/Forbidden'\n"
RESPONSE_BEFORE = "    AgentNotFound:\n"
RESPONSE = """    Forbidden:
      description: '`project-forbidden`: the caller may not read this project.'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/ErrorEnvelope'
          examples:
            project-forbidden:
              value:
                error:
                  code: project-forbidden
                  message: The caller may not read this project.
                  details: {}
                  requestId: 3b4c5d6e7f8049a1b2c3d4e5f6a7b8c9
"""


# ... and when DigitalOcean's live service is seen to answer a 403: its response, with its example
# body, as its other error responses state theirs.
DO_STATUS_AFTER = "        '401':\n          $ref: '#/components/responses/unauthorized'\n"
DO_STATUS = "        '403':\n          $ref: '#/components/responses/forbidden'\n"
DO_RESPONSE_BEFORE = "    not_found:\n"
DO_RESPONSE = """    forbidden:
      description: The token lacks a scope the request needs.
      x-evalmock-level: live
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/error'
          example:
            id: scope_missing
            message: The token lacks the genai:read scope.
"""


def add(document: Path, status: tuple[str, str], response: tuple[str, str]) -> None:
    """Add `status` (its line after the first) and `response` (before the second) to `document`."""
    text = document.read_text(encoding="utf-8")
    (after, line), (before, block) = status, response
    assert text.count(after) == 1 and text.count(before) == 1
    text = text.replace(after, after + line).replace(before, block + before)
    document.write_text(text, encoding="utf-8")


def with_a_403(folder: Path) -> Path:
    """A copy of the documents in `folder`, each with a 403 response added."""
    copy = folder / "openapi"
    shutil.copytree(openapi_dir(), copy)
    add(copy / DOCUMENT, (STATUS_AFTER, STATUS), (RESPONSE_BEFORE, RESPONSE))
    add(copy / DIGITALOCEAN, (DO_STATUS_AFTER, DO_STATUS), (DO_RESPONSE_BEFORE, DO_RESPONSE))
    return copy


def what_evalmock_makes_of_a_403(documents: Path) -> dict[str, Any]:
    env = {**os.environ, "EVALMOCK_OPENAPI_DIR": str(documents)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return what_evalmock_makes_of_a_403(openapi_dir())


@pytest.fixture(scope="module")
def documented(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return what_evalmock_makes_of_a_403(with_a_403(tmp_path_factory.mktemp("documents")))


def test_the_server_answers_a_documented_403_with_the_document_s_code(
    shipped: dict[str, Any], documented: dict[str, Any]
) -> None:
    assert shipped["server"]["forced"][0] == 400  # not a response of the shipped document
    status, body, request_id = documented["server"]["forced"]
    assert status == 403
    assert body["error"]["code"] == "project-forbidden"
    assert body["error"]["message"] == "The caller may not read this project."
    assert body["error"]["requestId"] == request_id
    assert "choose from 200, 400, 401, 403, 404, 503." in documented["server"]["refused"][1]


def test_the_server_answers_a_documented_digitalocean_403_with_the_document_s_body(
    shipped: dict[str, Any], documented: dict[str, Any]
) -> None:
    # under the `default` response before: a generic body
    assert shipped["server"]["digitalocean"][1]["id"] == "forbidden"
    status, body = documented["server"]["digitalocean"]
    assert status == 403
    assert (body["id"], body["message"]) == (
        "scope_missing",
        "The token lacks the genai:read scope.",
    )


def test_the_harness_s_rules_name_a_documented_403(
    shipped: dict[str, Any], documented: dict[str, Any]
) -> None:
    before, after = shipped["harness"]["rules"], documented["harness"]["rules"]
    assert "(200, 400, 401, 404, 503)" in before["status_code_conformance"]
    assert "(200, 400, 401, 403, 404, 503)" in after["status_code_conformance"]
    # no longer named as a status the page does not list
    assert "403 for a caller without read" not in after["status_code_conformance"]
    assert "a 403 project-forbidden" in after["error_code_is_the_page_s"]
    assert "403" not in before["error_code_is_the_page_s"]
    assert "(or 401, or 403 project-forbidden, or 503" in after["positive_data_acceptance"]
    assert "answered 2xx, 401, 404, 429 or 5xx," in shipped["harness"]["digitalocean"]
    assert "answered 2xx, 401, 403, 404, 429 or 5xx," in documented["harness"]["digitalocean"]
    assert "403" in documented["harness"]["valid_request_answers"]
    assert "403" not in shipped["harness"]["valid_request_answers"]


def test_the_proxy_judges_a_documented_403_s_code_and_body(
    shipped: dict[str, Any], documented: dict[str, Any]
) -> None:
    # undocumented, a 403 is left open, whatever its body
    assert shipped["proxy"] == {"project-forbidden": "", "nope": "", "no envelope": ""}
    assert documented["proxy"]["project-forbidden"] == ""
    assert documented["proxy"]["nope"].startswith(
        "error_code_is_the_page_s;level=page;outcome=failed"
    )
    # its body is held to the document's schema for a 403 (the envelope's requestId is required)
    assert documented["proxy"]["no envelope"].startswith(
        "response_schema_conformance;level=page;outcome=failed"
    )
