"""A bounded Schemathesis run, positive and negative, against the live server: no 5xx, nothing undocumented."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
import schemathesis
from schemathesis.engine import Status, events, from_schema
from schemathesis.generation import GenerationMode

from evalmock.contract.documents import APIS
from evalmock.contract.targets import load_targets

from .answers import TRACEBACK_MARKERS

MAX_EXAMPLES = 25  # per phase; a few hundred requests per API in all
# A run that sent fewer did not really fuzz (DigitalOcean's operation has only two parameters to vary).
MIN_REQUESTS = {"test-set": 150, "gradient": 30}


def configured_schema(api_name: str, base_url: str, known: list[dict[str, str]], seen: Counter[str]) -> Any:
    api = APIS[api_name]
    config = schemathesis.Config.from_dict({
        "seed": 42,
        "headers": {"Authorization": "Bearer demo-user"},
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "database": "none"},  # same run every time
        "phases": {"coverage": {"generate-duplicate-query-parameters": True,
                                "unexpected-methods": ["DELETE", "POST", "PUT", "TRACE"]}},
        "checks": {
            # Negative data must be refused as bad input or, for DigitalOcean's plain-string id, as unknown.
            "negative_data_rejection": {"expected-statuses": [400, 401, 404] if api_name == "gradient" else [400, 401]},
            # A made-up cursor is schema-valid yet rightly refused, and a made-up agent or test case is unknown.
            "positive_data_acceptance": {"expected-statuses": ["2xx", 400, 401, 404]},
        },
    })
    config.update(max_failures=None)
    schema = schemathesis.openapi.from_path(api.path, config=config)
    schema.config.update(base_url=base_url + api.base_path)
    # Any well-formed bearer token is a caller of its own (a fixed decision, like Prism), so Schemathesis's
    # "made-up credentials must get a 401" check does not apply; missing and malformed tokens are still 401.
    schema.config.checks.update(included_check_names=["all"], excluded_check_names=["ignored_auth"])
    turns = itertools.count()

    @schema.hook
    def map_case(context: Any, case: Any) -> Any:
        # Half of the positive cases name a real list or test case, so that pages and cursors are exercised.
        if case.meta is None or case.meta.generation.mode != GenerationMode.POSITIVE or not case.path_parameters:
            return case
        turn = next(turns)
        if turn % 2 == 0:
            case.path_parameters.update(known[turn // 2 % len(known)]["path"])
            case.query = {**(case.query or {}), **known[turn // 2 % len(known)]["query"]}
        return case

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        seen["requests"] += 1
        if response.status_code >= 500:
            seen["5xx"] += 1
        if any(marker in response.text for marker in TRACEBACK_MARKERS):
            seen["stack traces"] += 1

    return schema


def known_values(api_name: str, targets_path: Any) -> list[dict[str, dict[str, str]]]:
    targets = load_targets(targets_path)
    if api_name == "test-set":
        return [{"path": {"agentId": p.agent_id}, "query": {"projectId": p.project_id}} for p in targets.projects]
    return [{"path": {"test_case_uuid": c.uuid}, "query": {}} for c in targets.test_cases]


@pytest.mark.parametrize("api_name", ["test-set", "gradient"])
def test_fuzzing_finds_no_server_error_and_nothing_outside_the_document(live_server: Any, api_name: str) -> None:
    seen: Counter[str] = Counter()
    schema = configured_schema(api_name, live_server.base_url, known_values(api_name, live_server.targets_path), seen)
    failures: set[str] = set()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for nodes in event.recorder.checks.values():
                failures.update(
                    f"{node.failure_info.failure.code} {node.failure_info.failure.title}: "
                    f"{node.failure_info.failure.message}\n{node.failure_info.code_sample}"
                    for node in nodes
                    if node.status == Status.FAILURE and node.failure_info
                )
        elif isinstance(event, events.FatalError | events.NonFatalError):
            failures.add(f"{type(event).__name__}: {getattr(event, 'value', event)}")
    assert not failures, "\n\n".join(sorted(failures)[:10])
    assert seen["5xx"] == 0 and seen["stack traces"] == 0, seen
    assert seen["requests"] >= MIN_REQUESTS[api_name], seen
