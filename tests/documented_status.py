"""What the server, the harness and the proxy make of a 403 answer, as one JSON object on stdout:
run as a script, with EVALMOCK_OPENAPI_DIR naming the documents to read (test_documented_status)."""

from __future__ import annotations

import io
import json
import sys
from datetime import UTC, datetime
from typing import Any

from evalmock.harness.checks import find_check
from evalmock.harness.checks.policy import Policy
from evalmock.harness.run.schemathesis_schema import config_dict
from evalmock.harness.traffic.audit import TrafficAudit
from evalmock.proxy.forwarded import Forwarded
from evalmock.proxy.session import Outputs, ProxySession
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.world import World

FORBIDDEN = 403
AGENT, PROJECT = "example", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
PATH = f"/v1/agents/{AGENT}/test-set/cases?projectId={PROJECT}"
AUTH = {"Authorization": "Bearer demo-user"}
TEST_CASE_PATH = "/v2/gen-ai/evaluation_test_cases/123e4567-e89b-12d3-a456-426614174000"


def server_answers() -> dict[str, Any]:
    """A request of each API that asks for a 403 with Prefer, and one that asks for a status no
    response of the test-set document declares."""
    settings = ServerSettings(seed=42, cases=40, validate_responses=True)
    forced_403 = {**AUTH, "Prefer": f"code={FORBIDDEN}"}
    with create_app(settings, World(seed=42, cases=40)).test_client() as client:
        forced = client.get(PATH, headers=forced_403)
        refused = client.get(PATH, headers={**AUTH, "Prefer": "code=418"})
        digitalocean = client.get(TEST_CASE_PATH, headers=forced_403)
    return {
        "forced": [forced.status_code, forced.json(), forced.headers.get("x-request-id")],
        "refused": [refused.status_code, refused.json()["error"]["message"]],
        "digitalocean": [digitalocean.status_code, digitalocean.json()],
    }


def harness_rules() -> dict[str, Any]:
    """The rule texts that name statuses, and the statuses Schemathesis lets a valid request get."""
    names = ("status_code_conformance", "error_code_is_the_page_s", "positive_data_acceptance")
    checks = config_dict("test-set", Policy())["checks"]
    return {
        "rules": {name: find_check(name, "test-set").rule for name in names},
        "digitalocean": find_check("positive_data_acceptance", "gradient").rule,
        "valid_request_answers": checks["positive_data_acceptance"]["expected-statuses"],
    }


def proxy_verdicts() -> dict[str, str]:
    """The evalmock-violations header the proxy gives a 403 naming the document's code, one naming
    another code, and one whose body is no error envelope (without its request id)."""
    session = ProxySession(
        TrafficAudit(Policy(), apis=("test-set",)),
        "http://upstream.invalid",
        Outputs(),
        stream=io.StringIO(),
    )
    answers = {
        code: {"error": {"code": code, "message": "m", "details": {}, "requestId": "r-1"}}
        for code in ("project-forbidden", "nope")
    }
    answers["no envelope"] = {"error": {"code": "project-forbidden", "message": "m"}}
    verdicts = {}
    for name, body in answers.items():
        forwarded = Forwarded(
            started=datetime.now(UTC),
            method="GET",
            url="http://upstream.invalid" + PATH,
            path=PATH,
            request_headers=list(AUTH.items()),
            status=FORBIDDEN,
            response_headers=[("content-type", "application/json"), ("x-request-id", "r-1")],
            body=json.dumps(body).encode(),
        )
        verdicts[name] = dict(session.judge("test-set", forwarded)).get("evalmock-violations", "")
    return verdicts


if __name__ == "__main__":
    json.dump(
        {"server": server_answers(), "harness": harness_rules(), "proxy": proxy_verdicts()},
        sys.stdout,
    )
