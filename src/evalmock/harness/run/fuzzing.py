"""Running Schemathesis on one API: its built-in checks judge every generated request, our per-response checks
see every response it gets, and each outcome is recorded under the rule it is about, at that rule's level.

A phase runs as fixed shards (one run each), so that workers can run them side by side while every verdict stays
the same whatever their number; a throttled answer is waited out and retried before any check sees it."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from schemathesis.core.transport import Response
from schemathesis.engine import Status, events, from_schema

from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.defaults import DEFAULT_REQUEST_TIMEOUT
from evalmock.harness.checks.attribution import attribute
from evalmock.harness.checks.exchange import exchange_from_schemathesis, first_header
from evalmock.harness.checks.open_answers import refusal_left_open
from evalmock.harness.checks.outcomes import SLOW_SERVICE, TurnedAway
from evalmock.harness.checks.target_keys import TARGET_NAMES, TargetKey, target_key
from evalmock.harness.results.audit_results import COUNT
from evalmock.harness.results.findings import Gap, RequestRecord, request_shape
from evalmock.harness.results.ledger import Recorder
from evalmock.harness.run.judge import ResponseJudge, failure_example
from evalmock.harness.run.schemathesis_schema import PHASES, known_good_case_hook, load_schema
from evalmock.harness.run.throttle import Throttle, throttle_wait
from evalmock.harness.secrets.redactor import Redactor

# Shards per phase. Fixed (never the number of workers), so that the requests sent, and so every verdict, are the
# same with one worker or eight. The examples phase sends a handful of requests; a stateful run sends about 25
# whatever its examples, so more of them would only add requests.
SHARDS = {"examples": 1, "coverage": 8, "fuzzing": 4, "stateful": 4}
# CPython 3.11 (before 3.12) may fail `ast.parse` when threads parse at once (gh-106905), and Hypothesis parses
# source to describe strategies: a run that meets it is run again, whole, since its shard is deterministic.
THREAD_RACE = "AST constructor recursion depth mismatch"


class ThreadRace(Exception):
    """A Schemathesis run broken by the interpreter's ast race under threads (not by the service): run it again.
    Seen as Schemathesis's error, or as a stateful phase that sent no request though the document links it."""


@dataclass(frozen=True)
class Shard:
    """One Schemathesis run: one phase, and the slice `index` of `count` of its cases."""

    phase: str
    index: int = 0
    count: int = 1

    def seed(self, seed: int) -> int:
        """Generated phases draw other cases per shard; the coverage phase enumerates the same list in each."""
        return seed + self.index if self.phase in ("fuzzing", "stateful") else seed

    def max_examples(self, max_examples: int) -> int:
        return math.ceil(max_examples / self.count) if self.phase in ("fuzzing", "stateful") else max_examples


def shards(phases: tuple[str, ...]) -> list[Shard]:
    """The runs of an audit's Schemathesis phases, in their fixed order."""
    return [Shard(phase, index, SHARDS[phase]) for phase in PHASES if phase in phases
            for index in range(SHARDS[phase])]


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
    results: Recorder,
    redactor: Redactor,
    seed: int = 42,
    max_examples: int = 25,
    phases: tuple[str, ...] = PHASES,
    on_progress: Callable[[FuzzProgress], None] | None = None,
    throttle: Throttle | None = None,
    shard: Shard | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    turned_away: frozenset[TargetKey] = frozenset(),
) -> None:
    """Run Schemathesis on one API (every phase in one run, or one shard) and record every check outcome into
    `results`; an answer that turns the audit's token away from something in `turned_away` is judged by no check
    (a gap of the audit: audit.turned_away_targets)."""
    if shard is not None:
        seed, max_examples, phases = shard.seed(seed), shard.max_examples(max_examples), (shard.phase,)
    schema = load_schema(api, results.policy, base_url=base_url, token=token, seed=seed, max_examples=max_examples,
                         phases=phases)
    schema.config.update(request_timeout=request_timeout)
    throttle = throttle or Throttle()
    if throttle.limiter is not None:
        schema.config.rate_limit = throttle.limiter  # one limiter for every request of the audit
    if shard is not None and shard.count > 1 and shard.phase == "coverage":
        schema.hook(slice_hook(shard))
    schema.hook(known_good_case_hook(api, targets))
    ours = ResponseJudge(api, results, redactor, targets=targets)  # Schemathesis runs the document's checks
    retry = ThrottledRetry(throttle, request_timeout)
    refusal = Refusal(api, token, turned_away)

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        if retry.wait_out(case, response) and not refusal.of(
            response.status_code, _first_values(response.request.headers), case.query, case.path_parameters
        ):
            ours.judge(exchange_from_schemathesis(response))

    progress = FuzzProgress()
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseStarted):
            progress.phase = str(event.phase.name)
        elif isinstance(event, events.ScenarioFinished):
            _record_scenario(api, event, results, redactor, progress, retry, targets, refusal)
        else:
            _record_event(api, event, results, redactor)
        if on_progress is not None:
            on_progress(progress)
    if shard is not None and shard.phase == "stateful" and progress.cases == 0 and _has_links(api):
        raise ThreadRace("its stateful phase sent no request, though the document links the operation to itself")


def _record_event(api: str, event: Any, results: Recorder, redactor: Redactor) -> None:
    """What an event of the run other than a scenario tells the audit: work it could not do, or why it stopped."""
    if isinstance(event, events.NonFatalError) and THREAD_RACE in str(event.value):
        raise ThreadRace(str(event.value))
    if isinstance(event, events.NonFatalError):
        slow = isinstance(event.value, requests.Timeout)
        results.gap(Gap(api, redactor.text(f"Schemathesis could not test the operation: {event.value}"),
                        SLOW_SERVICE if slow else ""))
    elif isinstance(event, events.FatalError):
        results.gap(Gap(api, redactor.text(f"Schemathesis stopped: {event.exception}")))
    elif isinstance(event, events.EngineFinished) and event.stop_reason.skip_explanation:
        results.notes.append(f"{api}: Schemathesis stopped early: {event.stop_reason.skip_explanation}")


def _has_links(api: str) -> bool:
    spec = operation(api).document.spec
    return any("links" in response for item in spec.get("paths", {}).values() for op in item.values()
               if isinstance(op, dict) for response in (op.get("responses") or {}).values()
               if isinstance(response, dict))


def slice_hook(shard: Shard) -> Callable[[Any, Any], bool]:
    """A `filter_case` hook keeping this shard's slice of the cases, by their order of generation."""
    seen = 0

    def filter_case(context: Any, case: Any) -> bool:
        nonlocal seen
        seen += 1
        return (seen - 1) % shard.count == shard.index

    return filter_case


class ThrottledRetry:
    """Waits out a throttled answer in Schemathesis's `after_call` hook and puts the answer to the same request,
    sent again, in its place (the hook's way of post-processing a response, in place), before any check sees it."""

    def __init__(self, throttle: Throttle, timeout: float = DEFAULT_REQUEST_TIMEOUT) -> None:
        self.throttle = throttle
        self.timeout = timeout
        self.unjudged: set[str] = set()  # ids of the cases whose answer was still throttled: no check judges them
        self.counted_probes: set[str] = set()  # ids of throttled probes already counted (recorders may repeat them)
        self._local = threading.local()

    def wait_out(self, case: Any, response: Response) -> bool:
        """Whether the answer in `response` (replaced by a later one, if it was throttled) may be judged."""
        final, throttled = self.throttle.send(
            lambda: self._send_again(response), lambda answer: (answer.status_code, answer.headers),
            first=response,
        )
        if final is not response:
            _replace(response, final)
        if throttled:
            self.unjudged.add(case.id)
        return not throttled

    def _send_again(self, response: Response) -> Response:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        answer = session.send(response.request, timeout=self.timeout, allow_redirects=False)
        return Response.from_requests(answer, verify=response.verify)


def _retry_after(response: Response) -> str | None:
    return first_header(response.headers, "retry-after")


def _replace(target: Response, answer: Response) -> None:
    for name in Response.__slots__:
        if hasattr(answer, name):
            setattr(target, name, getattr(answer, name))
        elif hasattr(target, name):
            delattr(target, name)  # a cached view of the throttled body


class Refusal:
    """Whether an answer turns the audit's token away from a project or test case it is turned away from
    everywhere (audit.turned_away_targets): a 403 to a request that carries that token and asks for it."""

    def __init__(self, api: str, token: str | None, turned_away: frozenset[TargetKey]) -> None:
        self.api = api
        self.token = token
        self.turned_away = turned_away

    def of(self, status: int | None, headers: Mapping[str, str] | None, query: Mapping[str, Any] | None,
           path_parameters: Mapping[str, Any] | None) -> bool:
        if status != 403 or not self.token or not self.turned_away or headers is None:
            return False
        sent = next((value for name, value in headers.items() if name.lower() == "authorization"), "")
        scheme, _, credentials = sent.strip().partition(" ")
        if scheme.lower() != "bearer" or credentials.strip() != self.token:  # a scheme's case is free, a token's not
            return False
        return target_key(self.api, path_parameters or {}, query or {}) in self.turned_away


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
        return cls(interaction, getattr(value, "query", None), getattr(value, "path_parameters", None),
                   response.status_code if response is not None else None,
                   request.method if request is not None else "GET",
                   _first_values(request.headers) if request is not None else None)


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


def _record_scenario(api: str, event: Any, results: Recorder, redactor: Redactor, progress: FuzzProgress,
                     retry: ThrottledRetry, targets: Targets, refusal: Refusal) -> None:
    recorder = event.recorder
    progress.cases += len(recorder.cases)
    if event.status == Status.SKIP and event.skip_reason:
        results.notes.append(f"{api} ({event.phase}): {event.skip_reason}")
    scene = _Scene(api, results, redactor, progress, retry, targets, refusal)
    not_judged = 0
    for case_id, nodes in recorder.checks.items():
        # Probes a check sent from inside itself (ignored_auth's) reach no hook: a throttled one is counted here,
        # and the check's verdict on that case dropped, since it would rest on the gateway's word.
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
                not_judged += _record_node(scene, recorder, case_id, sent, node)
    if not_judged:
        results.count_note(
            f"{api}: {COUNT} Schemathesis finding(s) about what the pages leave open (an undeclared or repeated "
            "query parameter, an empty include= or kind=, a stray header, a status the pages name no other for) were "
            "not judged", not_judged)


def _operation_path(api: str) -> str:
    return operation(api).base_path + operation(api).path


def _record_node(scene: _Scene, recorder: Any, case_id: str, sent: _Sent, node: Any) -> int:
    """Record one built-in check's outcome on one case under the rule it counts for; 1 if it was a finding about
    what the pages leave open, which no rule judges."""
    api, results, redactor = scene.api, scene.results, scene.redactor
    check = attribute(api, node.name, status=sent.status, query=sent.query, method=sent.method,
                      headers=sent.headers, targets=scene.targets)
    if check is None:
        if node.status == Status.FAILURE:
            _show_unjudged(api, node.name, _request_record(sent.interaction, redactor), results)
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
        scene.progress.failures += 1
        record = _request_record(sent.interaction, redactor)
        shape = request_shape(record.method if record else "GET", _operation_path(api), sent.status)
        results.breach(check, failure_example(failure, record, redactor), shape=shape,
                       code=getattr(failure, "code", None))
    return 0


UNJUDGED_SHOWN = 3  # examples of Schemathesis findings not judged, per API and recorder: enough to check the count


def _show_unjudged(api: str, check: str, record: RequestRecord | None, results: Recorder) -> None:
    """A few of the findings not judged, as sent and answered, so that a reader can see they are what the pages leave
    open (the count alone asks to be taken on trust)."""
    prefix = f"{api}: not judged, as the pages leave it open: "
    if record is None or sum(note.startswith(prefix) for note in results.notes) >= UNJUDGED_SHOWN:
        return
    note = f"{prefix}Schemathesis's {check} on {record.method} {record.url} -> {record.status}"
    if note not in results.notes:
        results.notes.append(note)


def _first_values(headers: Any) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in dict(headers).items()}


def _throttled_children(recorder: Any, case_id: str, retry: ThrottledRetry) -> int:
    """How many probes a check sent from inside itself for `case_id` were throttled (each counted once)."""
    throttled = 0
    for probe_id, node in recorder.cases.items():
        interaction = recorder.interactions.get(probe_id) if node.parent_id == case_id else None
        answer = interaction.response if interaction is not None else None
        if answer is not None and throttle_wait(answer.status_code, _retry_after(answer)) is not None:
            throttled += 1
            if probe_id not in retry.counted_probes:
                retry.counted_probes.add(probe_id)
                retry.throttle.unwaited_probe(_retry_after(answer))
    return throttled


def _throttled_answer(recorder: Any, case_id: str, failure: Any, retry: ThrottledRetry) -> bool:
    """Whether `failure` is about a throttled answer no hook waited out (a probe outside the case's children is
    counted here; the children were counted with their case)."""
    probe_id = getattr(failure, "case_id", None) or case_id
    interaction = recorder.interactions.get(probe_id)
    answer = interaction.response if interaction is not None else None
    if answer is None or throttle_wait(answer.status_code, _retry_after(answer)) is None:
        return False
    if probe_id not in retry.counted_probes:
        retry.counted_probes.add(probe_id)
        retry.throttle.unwaited_probe(_retry_after(answer))
    return True


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
