"""Running Schemathesis on one API: its built-in checks judge every generated request, our per-response checks
see every response it gets, and each outcome is recorded under the rule it is about, at that rule's level."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schemathesis.engine import Status, events, from_schema

from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.harness.attribution import attribute, refusal_left_open
from evalmock.harness.exchange import exchange_from_schemathesis
from evalmock.harness.redact import Redactor
from evalmock.harness.response_judge import ResponseJudge, failure_example
from evalmock.harness.results import RequestRecord, Results, request_shape
from evalmock.harness.schemathesis_config import PHASES, known_good_case_hook, load_schema


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
    schema = load_schema(api, results.policy, base_url=base_url, token=token, seed=seed, max_examples=max_examples,
                         phases=phases)
    schema.hook(known_good_case_hook(api, targets))
    ours = ResponseJudge(api, results, redactor, targets=targets)  # Schemathesis runs the document's checks

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        ours.judge(exchange_from_schemathesis(response))

    progress = FuzzProgress()
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseStarted):
            progress.phase = str(event.phase.name)
        elif isinstance(event, events.ScenarioFinished):
            _record_scenario(api, event, results, redactor, progress, targets)
        elif isinstance(event, events.NonFatalError):
            results.notes.append(redactor.text(f"{api}: Schemathesis could not test the operation: {event.value}"))
        elif isinstance(event, events.FatalError):
            results.notes.append(redactor.text(f"{api}: Schemathesis stopped: {event.exception}"))
        elif isinstance(event, events.EngineFinished) and event.stop_reason.skip_explanation:
            results.notes.append(f"{api}: Schemathesis stopped early: {event.stop_reason.skip_explanation}")
        if on_progress is not None:
            on_progress(progress)


def _record_scenario(
    api: str, event: Any, results: Results, redactor: Redactor, progress: FuzzProgress, targets: Targets
) -> None:
    recorder = event.recorder
    progress.cases += len(recorder.cases)
    if event.status == Status.SKIP and event.skip_reason:
        results.notes.append(f"{api} ({event.phase}): {event.skip_reason}")
    operation_path = operation(api).base_path + operation(api).path
    not_judged = 0
    for case_id, nodes in recorder.checks.items():
        node_case = recorder.cases.get(case_id)
        query = getattr(node_case.value, "query", None) if node_case is not None else None
        path_parameters = getattr(node_case.value, "path_parameters", None) if node_case is not None else None
        interaction = recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        status = response.status_code if response is not None else None
        request = interaction.request if interaction is not None else None
        headers = _first_values(request.headers) if request is not None else None
        for node in nodes:
            if node.status not in (Status.SUCCESS, Status.FAILURE):
                continue
            check = attribute(api, node.name, status=status, query=query, method=request.method if request else "GET",
                              headers=headers, targets=targets)
            if check is None:
                not_judged += node.status == Status.FAILURE
                continue
            if node.name == "positive_data_acceptance" and refusal_left_open(
                api, status, query or {}, path_parameters or {}, targets
            ):
                results.passed(check)  # a cursor not taken, or a project the targets do not list
                continue
            if node.status == Status.SUCCESS:
                results.passed(check)
            elif node.failure_info is not None:
                failure = node.failure_info.failure
                progress.failures += 1
                record = _request_record(interaction, redactor)
                method = record.method if record else "GET"
                shape = request_shape(method, operation_path, status)
                results.breach(check, failure_example(failure, record, redactor), shape=shape,
                               code=getattr(failure, "code", None))
    if not_judged:
        results.notes.append(
            f"{api}: {not_judged} Schemathesis finding(s) about what the pages leave open (an undeclared or repeated "
            "query parameter, an empty include= or kind=, a stray header, a status the pages name no other for) were "
            "not judged"
        )


def _first_values(headers: Any) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in dict(headers).items()}


def _request_record(interaction: Any, redactor: Redactor) -> RequestRecord | None:
    if interaction is None:
        return None
    request = interaction.request
    headers = {k: (v[0] if isinstance(v, list) else v) for k, v in dict(request.headers).items()}
    body = request.body if isinstance(request.body, bytes) else (request.body or "").encode() or None
    status = interaction.response.status_code if interaction.response is not None else None
    return RequestRecord(
        method=request.method,
        url=redactor.text(request.uri),
        headers=redactor.headers(headers),
        status=status,
        curl=redactor.curl(request.method, request.uri, headers, body),
    )
