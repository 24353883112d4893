"""Bounded Schemathesis runs against the live server: the audit's own configuration (every rule,
strict and live) finds no 5xx and nothing outside the document, and so does plain `schemathesis run`
on our documents."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from schemathesis.engine import Status, events, from_schema

from evalmock.contract.documents import APIS
from evalmock.contract.targets import Targets, load_targets
from evalmock.harness.checks.open_answers import refusal_left_open
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.run.schemathesis_schema import known_good_case_hook, load_schema

from .answers import TRACEBACK_MARKERS

MAX_EXAMPLES = 25  # per phase; a few hundred requests per API in all
# A run that sent fewer did not really fuzz (DigitalOcean's operation has only two parameters to
# vary).
MIN_REQUESTS = {"test-set": 150, "gradient": 30}
STRICTEST = Policy(strict=True, profile=LIVE_PROFILE)


def left_open(api: str, check: str, recorder: Any, case_id: str, targets: Targets) -> bool:
    """A positive request's 400 or 404 that the audit lets pass too: one with a cursor (which the
    runtime may not take), or for an agent or project the targets do not list (the audit's fuzzing
    does the same)."""
    case = recorder.cases[case_id].value
    interaction = recorder.interactions.get(case_id)
    status = (
        interaction.response.status_code
        if interaction is not None and interaction.response
        else None
    )
    return check == "positive_data_acceptance" and refusal_left_open(
        api, status, case.query or {}, case.path_parameters or {}, targets
    )


def configured_schema(api: str, base_url: str, targets_path: Any, seen: Counter[str]) -> Any:
    targets = load_targets(targets_path)
    schema = load_schema(
        api, STRICTEST, base_url=base_url, token=targets.token, max_examples=MAX_EXAMPLES
    )
    schema.hook(known_good_case_hook(api, targets))

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        seen["requests"] += 1
        if response.status_code >= 500:
            seen["5xx"] += 1
        if any(marker in response.text for marker in TRACEBACK_MARKERS):
            seen["stack traces"] += 1

    return schema


@pytest.mark.parametrize("api", list(APIS))
def test_fuzzing_finds_no_server_error_and_nothing_outside_the_document(
    live_server: Any, api: str
) -> None:
    seen: Counter[str] = Counter()
    schema = configured_schema(api, live_server.base_url, live_server.targets_path, seen)
    targets = load_targets(live_server.targets_path)
    failures: set[str] = set()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, nodes in event.recorder.checks.items():
                failures.update(
                    f"{node.failure_info.failure.code} {node.failure_info.failure.title}: "
                    f"{node.failure_info.failure.message}\n{node.failure_info.code_sample}"
                    for node in nodes
                    if node.status == Status.FAILURE
                    and node.failure_info
                    and not left_open(api, node.name, event.recorder, case_id, targets)
                )
        elif isinstance(event, events.FatalError | events.NonFatalError):
            failures.add(f"{type(event).__name__}: {getattr(event, 'value', event)}")
    assert not failures, "\n\n".join(sorted(failures)[:10])
    assert seen["5xx"] == 0 and seen["stack traces"] == 0, seen
    assert seen["requests"] >= MIN_REQUESTS[api], seen


@pytest.mark.parametrize("api", list(APIS))
def test_plain_schemathesis_on_our_documents_finds_nothing(
    live_server: Any, api: str, tmp_path: Path
) -> None:
    document = APIS[api]
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        str(document.path),
        "--url",
        live_server.base_url + document.base_path,
        "--checks",
        "all",
        "--exclude-checks",
        "positive_data_acceptance",
        "-H",
        "Authorization: Bearer demo-user",
        "--max-examples",
        "10",
        "--seed",
        "42",
        "--no-color",
    ]
    # In a scratch folder: the command line keeps a cache of its own in the working directory.
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "No issues found" in done.stdout
