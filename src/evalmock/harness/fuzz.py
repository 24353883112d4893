"""The Schemathesis run: every fitting built-in check plus our per-response checks, on one API document."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import schemathesis
from schemathesis import GenerationMode
from schemathesis.engine import Status, events, from_schema
from schemathesis.generation.meta import TestPhase

from evalmock.contract.documents import api as api_document
from evalmock.harness.checks import RESPONSE_CHECKS, Check
from evalmock.harness.checks.base import exchange_from_schemathesis
from evalmock.harness.operations import api_of_operation_id, operation
from evalmock.harness.redact import Redactor
from evalmock.harness.results import FAILED, PASSED, SKIPPED, RequestRecord, Results
from evalmock.harness.targets import Targets

PHASES = ("examples", "coverage", "fuzzing", "stateful")

# What the pages allow a schema-valid request to get. listTestSetCases: a made-up but schema-valid cursor
# is refused with 400 (the cursor "exactly as it came" is the only valid one), an unknown agent is a 404,
# and 503 database-busy is declared. getEvaluationTestCase: an id or version that names nothing is a 404.
POSITIVE_STATUSES = {
    "test-set": ["2xx", "400", "401", "404", "503"],
    "gradient": ["2xx", "401", "404", "429", "5xx"],
}
# What the pages say an invalid request gets: 400 bad-input (or 401 when the token is what is wrong).
# The DigitalOcean path parameter is a plain string, so an id that names nothing is a 404, never a 400.
NEGATIVE_STATUSES = {
    "test-set": ["400", "401"],
    "gradient": ["400", "401", "404"],
}


def _operation_api(case: Any) -> str | None:
    definition = getattr(case.operation, "definition", None)
    raw = getattr(definition, "raw", None)
    return api_of_operation_id(raw.get("operationId") if isinstance(raw, dict) else None)


# (case id, check name) of each per-response check that applied to a response, so that a check that
# never met a response it speaks about is reported as not exercised rather than as passed.
_APPLIED: set[tuple[str, str]] = set()


def _as_schemathesis_check(check: Check) -> Callable[..., bool | None]:
    def run(ctx: Any, response: Any, case: Any) -> bool | None:
        if _operation_api(case) != check.api:
            return None
        if check.func(exchange_from_schemathesis(response)):  # raises Violation, an AssertionError
            _APPLIED.add((case.id, check.name))
        return None

    run.__name__ = check.name
    run.__qualname__ = check.name
    run.__doc__ = check.rule
    return run


@functools.cache
def register_checks() -> tuple[str, ...]:
    """Register each per-response check with Schemathesis (once per process); returns their names.

    A registered check runs on every Schemathesis call in the process, but each one only acts on the
    operation of its own API (by operationId), so other suites on other documents are unaffected.
    """
    for check in RESPONSE_CHECKS:
        schemathesis.check(_as_schemathesis_check(check))
    return tuple(check.name for check in RESPONSE_CHECKS)


def config_dict(api: str, *, seed: int, max_examples: int, phases: tuple[str, ...] = PHASES) -> dict[str, Any]:
    """The Schemathesis configuration of one audit, as `schemathesis.toml` would say it (no secrets here)."""
    others = {check.name: {"enabled": False} for check in RESPONSE_CHECKS if check.api != api}
    return {
        "seed": seed,
        "continue-on-failure": True,  # report every violation, not only the first of each phase
        "generation": {"max-examples": max_examples, "database": "none"},
        "phases": {
            **{name: {"enabled": name in phases} for name in PHASES},
            # Duplicated query parameters probe the parser too; checks leave ambiguous requests alone.
            "coverage": {"enabled": "coverage" in phases, "generate-duplicate-query-parameters": True},
        },
        "checks": {
            "positive_data_acceptance": {"expected-statuses": POSITIVE_STATUSES[api]},
            "negative_data_rejection": {"expected-statuses": NEGATIVE_STATUSES[api]},
            **others,
        },
    }


def keep_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """A `filter_failure` hook: drop `ignored_auth` findings about tokens Schemathesis made up.

    The pages say which tokens get a 401 (missing, malformed, expired, revoked) but not which well-formed
    tokens are valid: a mock may accept any, so only the no-token probe of `ignored_auth` is kept.
    """
    return getattr(failure, "scenario", None) not in {"invalid_auth", "generated_auth"}


def known_good_case_hook(api: str, targets: Targets) -> Callable[[Any, Any], Any]:
    """A `map_case` hook that points positive cases at things that exist, so they reach the real logic."""
    projects = itertools.cycle(targets.projects) if targets.projects else None
    test_cases = itertools.cycle(targets.test_cases) if targets.test_cases else None

    def map_case(context: Any, case: Any) -> Any:
        meta = case.meta
        if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
            return case
        if api == "test-set" and projects is not None and case.path_parameters and case.query is not None:
            if meta.phase.name == TestPhase.STATEFUL:
                # The nextPage link carries agentId, projectId and cursor but not the filters, and a sealed
                # cursor is only good for its own list and filters: keep every step on one unfiltered list
                # so the link walks real pages instead of collecting legitimate 400s.
                project = targets.projects[0]
                case.query.pop("include", None)
                case.query.pop("kind", None)
            else:
                project = next(projects)
            case.path_parameters["agentId"] = project.agent_id
            if "projectId" in case.query:
                case.query["projectId"] = project.project_id
        if api == "gradient" and test_cases is not None and case.path_parameters:
            test_case = next(test_cases)
            case.path_parameters["test_case_uuid"] = test_case.uuid
            version = (case.query or {}).get("evaluation_test_case_version")
            # Half of the versions become real ones; the rest keep exercising "a version it does not have".
            if isinstance(version, int) and test_case.versions and version % 2 == 0:
                case.query["evaluation_test_case_version"] = test_case.versions[version % len(test_case.versions)]
        return case

    return map_case


@dataclass
class FuzzProgress:
    """Counters the live display reads while a run goes on."""

    phase: str = ""
    cases: int = 0
    failures: int = 0


def run_schemathesis(
    api: str,
    *,
    base_url: str,
    token: str | None,
    targets: Targets,
    results: Results,
    redactor: Redactor,
    seed: int = 42,
    max_examples: int = 25,
    phases: tuple[str, ...] = PHASES,
    on_progress: Callable[[FuzzProgress], None] | None = None,
) -> None:
    """Run Schemathesis on one API and record every check outcome into `results`."""
    register_checks()
    _APPLIED.clear()
    document = api_document(api)
    config = schemathesis.Config.from_dict(config_dict(api, seed=seed, max_examples=max_examples, phases=phases))
    schema = schemathesis.openapi.from_path(str(document.path), config=config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    schema.config.update(base_url=base_url.rstrip("/") + document.base_path, headers=headers)
    schema.hook(known_good_case_hook(api, targets))
    schema.hook("filter_failure")(keep_failure)
    label = operation(api).label
    progress = FuzzProgress()
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseStarted):
            progress.phase = str(event.phase.name)
        elif isinstance(event, events.ScenarioFinished):
            _record_scenario(api, label, event, results, redactor, progress)
        elif isinstance(event, events.NonFatalError):
            results.record(api, label, "schemathesis_error", FAILED, source="schemathesis",
                           rule="Schemathesis could not test the operation", message=redactor.text(str(event.value)))
        elif isinstance(event, events.FatalError):
            results.record(api, label, "schemathesis_error", FAILED, source="schemathesis",
                           rule="Schemathesis stopped", message=redactor.text(str(event.exception)))
        elif isinstance(event, events.EngineFinished) and event.stop_reason.skip_explanation:
            results.notes.append(f"{api}: Schemathesis stopped early: {event.stop_reason.skip_explanation}")
        if on_progress is not None:
            on_progress(progress)


def _record_scenario(
    api: str, label: str, event: Any, results: Results, redactor: Redactor, progress: FuzzProgress
) -> None:
    recorder = event.recorder
    progress.cases += len(recorder.cases)
    if event.status == Status.SKIP and event.skip_reason:
        results.notes.append(f"{api} ({event.phase}): {event.skip_reason}")
    for case_id, nodes in recorder.checks.items():
        for node in nodes:
            source = _source(node.name)
            if node.status == Status.SUCCESS:
                if source == "schemathesis" or (case_id, node.name) in _APPLIED:
                    results.record(api, label, node.name, PASSED, source=source)
            elif node.status == Status.FAILURE and node.failure_info is not None:
                failure = node.failure_info.failure
                progress.failures += 1
                results.record(
                    api, label, node.name, FAILED, source=source,
                    rule=redactor.text(_rule(node.name, failure)),
                    message=redactor.text(str(getattr(failure, "message", "") or failure)),
                    request=_request_record(recorder, case_id, redactor),
                    code=getattr(failure, "code", None),
                )
            elif node.status == Status.SKIP:
                results.record(api, label, node.name, SKIPPED, source=source)


def _source(check_name: str) -> str:
    return "response" if check_name in register_checks() else "schemathesis"


def _rule(check_name: str, failure: Any) -> str:
    for check in RESPONSE_CHECKS:
        if check.name == check_name:
            return check.rule
    return str(getattr(failure, "title", "") or check_name)


def _request_record(recorder: Any, case_id: str, redactor: Redactor) -> RequestRecord | None:
    interaction = recorder.interactions.get(case_id)
    if interaction is None:
        return None
    request = interaction.request
    headers = {k: (v[0] if isinstance(v, list) else v) for k, v in dict(request.headers).items()}
    body = request.body if isinstance(request.body, bytes) else (request.body or "").encode() or None
    response = interaction.response
    excerpt = ""
    status = None
    if response is not None:
        status = response.status_code
        excerpt = redactor.text((response.content or b"")[:500].decode("utf-8", "replace"))
    return RequestRecord(
        method=request.method,
        url=redactor.text(request.uri),
        headers=redactor.headers(headers),
        status=status,
        response_excerpt=excerpt,
        curl=redactor.curl(request.method, request.uri, headers, body),
    )
