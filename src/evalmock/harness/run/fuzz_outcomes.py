"""Each Schemathesis scenario's outcomes, recorded under the rule each is about, at that rule's
level; what the pages leave open counted and shown, never judged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from schemathesis.engine import Status

from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.harness.checks.attribution import attribute
from evalmock.harness.checks.gateway_errors import GATEWAY_ERRORS
from evalmock.harness.checks.open_answers import refusal_left_open
from evalmock.harness.checks.outcomes import TurnedAway
from evalmock.harness.checks.target_keys import TARGET_NAMES
from evalmock.harness.results.audit_results import COUNT, counted_word
from evalmock.harness.results.findings import Gap, RequestRecord, request_shape
from evalmock.harness.results.ledger import Recorder
from evalmock.harness.run.fuzz_hooks import Refusal, ThrottledRetry, retry_after
from evalmock.harness.run.judge import failure_example
from evalmock.harness.run.throttle import throttle_wait
from evalmock.harness.secrets.redactor import Redactor


@dataclass
class FuzzProgress:
    """Counters the live display reads while a run goes on."""

    phase: str = ""
    cases: int = 0
    failures: int = 0


@dataclass(frozen=True)
class _Sent:
    """One case of a scenario as sent and answered, with what attribution reads of it."""

    interaction: Any
    query: Any
    path_parameters: Any
    status: int | None
    method: str
    headers: dict[str, str] | None

    @classmethod
    def of(cls, recorder: Any, case_id: str) -> _Sent:
        node_case = recorder.cases.get(case_id)
        value = node_case.value if node_case is not None else None
        interaction = recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        request = interaction.request if interaction is not None else None
        return cls(
            interaction,
            getattr(value, "query", None),
            getattr(value, "path_parameters", None),
            response.status_code if response is not None else None,
            request.method if request is not None else "GET",
            first_values(request.headers) if request is not None else None,
        )


@dataclass
class _Scene:
    """What recording one scenario needs from its run."""

    api: str
    results: Recorder
    redactor: Redactor
    progress: FuzzProgress
    retry: ThrottledRetry
    targets: Targets
    refusal: Refusal


def record_scenario(
    api: str,
    event: Any,
    results: Recorder,
    redactor: Redactor,
    progress: FuzzProgress,
    retry: ThrottledRetry,
    targets: Targets,
    refusal: Refusal,
) -> None:
    recorder = event.recorder
    progress.cases += len(recorder.cases)
    if event.status == Status.SKIP and event.skip_reason:
        results.notes.append(f"{api} ({event.phase}): {event.skip_reason}")
    scene = _Scene(api, results, redactor, progress, retry, targets, refusal)
    for case_id, nodes in recorder.checks.items():
        # Probes a check sent from inside itself (ignored_auth's) reach no hook: a throttled one is
        # counted here, and the check's verdict on that case dropped, since it would rest on the
        # gateway's word.
        probes_throttled = _throttled_children(recorder, case_id, retry)
        if case_id in retry.unjudged:
            continue  # still throttled after waiting: counted once, as the service's throttling
        sent = _Sent.of(recorder, case_id)
        if refusal.of(sent.status, sent.headers, sent.query, sent.path_parameters):
            record = _request_record(sent.interaction, redactor)
            path = urlsplit(record.url).path if record is not None else _operation_path(api)
            turned = TurnedAway.of(record.method if record else "GET", path, TARGET_NAMES[api])
            results.gap(Gap(api, redactor.text(turned.why), turned.remedy))
            continue
        for node in nodes:
            if node.status not in (Status.SUCCESS, Status.FAILURE):
                continue
            if not (probes_throttled and node.name == "ignored_auth"):
                _record_node(scene, recorder, case_id, sent, node)


def _operation_path(api: str) -> str:
    return operation(api).base_path + operation(api).path


def _record_node(scene: _Scene, recorder: Any, case_id: str, sent: _Sent, node: Any) -> int:
    """Record one built-in check's outcome on one case under the rule it counts for; 1 if it was a
    finding about what the pages leave open, which no rule judges."""
    api, results, redactor = scene.api, scene.results, scene.redactor
    check = attribute(
        api,
        node.name,
        status=sent.status,
        query=sent.query,
        method=sent.method,
        headers=sent.headers,
        targets=scene.targets,
    )
    if check is None:
        if node.status == Status.FAILURE:
            show_unjudged(api, node.name, _request_record(sent.interaction, redactor), results)
            return 1
        return 0
    if node.name == "positive_data_acceptance" and refusal_left_open(
        api, sent.status, sent.query or {}, sent.path_parameters or {}, scene.targets
    ):
        results.passed(check)  # a cursor not taken, or a project the targets do not list
    elif node.status == Status.SUCCESS:
        results.passed(check)
    elif node.failure_info is not None:
        failure = node.failure_info.failure
        if _throttled_answer(recorder, case_id, failure, scene.retry):
            return 0
        if _gateway_error_of_a_probe(recorder, case_id, failure):
            results.count_note(gateway_probe_note(api))
            return 0
        scene.progress.failures += 1
        record = _request_record(sent.interaction, redactor)
        shape = request_shape(record.method if record else "GET", _operation_path(api), sent.status)
        results.breach(
            check,
            failure_example(failure, record, redactor, api=api, check=node.name),
            shape=shape,
            code=getattr(failure, "code", None),
        )
    return 0


def show_unjudged(api: str, check: str, record: RequestRecord | None, results: Recorder) -> None:
    """A finding about what the pages leave open, not judged: folded with the others of its check
    and status into one note, which names a few as sent and answered (the count alone asks to be
    taken on trust)."""
    if record is None:
        return
    results.fold_note(
        f"{api}: {COUNT} {counted_word('finding')} of Schemathesis's {check} on answers of "
        f"{record.status} not "
        "judged, as the pages leave it open (an undeclared or repeated query parameter, an empty "
        "include= or kind=, a stray header, a method or status the pages name nothing for)",
        f"{record.method} {record.url}",
    )


def first_values(headers: Any) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in dict(headers).items()}


def _throttled_children(recorder: Any, case_id: str, retry: ThrottledRetry) -> int:
    """How many probes a check sent from inside itself for `case_id` were throttled (each counted
    once)."""
    throttled = 0
    for probe_id, node in recorder.cases.items():
        interaction = recorder.interactions.get(probe_id) if node.parent_id == case_id else None
        answer = interaction.response if interaction is not None else None
        if (
            answer is not None
            and throttle_wait(answer.status_code, retry_after(answer)) is not None
        ):
            throttled += 1
            retry.unwaited_probe(probe_id, answer)
    return throttled


def gateway_probe_note(api: str) -> str:
    """The counted note of answers of 502 or 504 to a check's own probes."""
    return (
        f"{api}: {COUNT} {counted_word('answer')} of 502 or 504 to a request a Schemathesis check "
        f"(ignored_auth) sent from inside itself, which no hook can send again, "
        f"{counted_word('was', 'were')} not judged (a gateway's answer is not the API's)"
    )


def _gateway_error_of_a_probe(recorder: Any, case_id: str, failure: Any) -> bool:
    """Whether `failure` is about a 502 or 504 answer to a request a check sent from inside itself
    (a case with a parent: ignored_auth's probes), which no hook asked again (the hook asked every
    other case's again)."""
    probe_id = getattr(failure, "case_id", None) or case_id
    node = recorder.cases.get(probe_id)
    interaction = recorder.interactions.get(probe_id)
    answer = interaction.response if interaction is not None else None
    return (
        getattr(node, "parent_id", None) is not None
        and answer is not None
        and answer.status_code in GATEWAY_ERRORS
    )


def _throttled_answer(recorder: Any, case_id: str, failure: Any, retry: ThrottledRetry) -> bool:
    """Whether `failure` is about a throttled answer no hook waited out (a probe outside the case's
    children is counted here; the children were counted with their case)."""
    probe_id = getattr(failure, "case_id", None) or case_id
    interaction = recorder.interactions.get(probe_id)
    answer = interaction.response if interaction is not None else None
    if answer is None or throttle_wait(answer.status_code, retry_after(answer)) is None:
        return False
    retry.unwaited_probe(probe_id, answer)
    return True


def _request_record(interaction: Any, redactor: Redactor) -> RequestRecord | None:
    if interaction is None:
        return None
    request = interaction.request
    headers = {k: (v[0] if isinstance(v, list) else v) for k, v in dict(request.headers).items()}
    body = (
        request.body if isinstance(request.body, bytes) else (request.body or "").encode() or None
    )
    status = interaction.response.status_code if interaction.response is not None else None
    return RequestRecord(
        method=request.method,
        url=redactor.text(request.uri),
        headers=redactor.headers(headers),
        status=status,
        curl=redactor.curl(request.method, request.uri, headers, body),
    )
