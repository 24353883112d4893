"""Running Schemathesis on one API: its built-in checks judge every generated request, our
per-response checks see every response it gets, and each outcome is recorded under the rule it is
about, at that rule's level.

A phase runs as fixed shards (one run each), so that workers can run them side by side while every
verdict stays the same whatever their number; a throttled answer is waited out and retried before
any check sees it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from schemathesis.engine import events, from_schema

from evalmock.contract.documents import api as api_document
from evalmock.contract.operations import operation
from evalmock.contract.targets import Targets
from evalmock.defaults import DEFAULT_MAX_EXAMPLES, DEFAULT_SEED
from evalmock.harness.checks.exchange import Exchange, exchange_from_schemathesis
from evalmock.harness.checks.outcomes import SLOW_SERVICE
from evalmock.harness.checks.target_keys import TargetKey
from evalmock.harness.excerpts import quoted
from evalmock.harness.results.findings import Gap
from evalmock.harness.results.ledger import Recorder
from evalmock.harness.run.answer_limits import AnswerLimits, AnswerOverLimit
from evalmock.harness.run.bounded_requests import CutAnswers, bound_schemathesis
from evalmock.harness.run.document_judge import DocumentJudge
from evalmock.harness.run.fuzz_hooks import Refusal, ThrottledRetry
from evalmock.harness.run.fuzz_outcomes import FuzzProgress, first_values, record_scenario
from evalmock.harness.run.judge import ResponseJudge
from evalmock.harness.run.schemathesis_schema import (
    MAX_REDIRECTS,
    PHASES,
    known_good_case_hook,
    load_schema,
)
from evalmock.harness.run.throttle import Throttle
from evalmock.harness.secrets.redactor import Redactor

# Shards per phase. Fixed (never the number of workers), so that the requests sent, and so every
# verdict, are the same with one worker or eight. The examples phase sends a handful of requests; a
# stateful run sends about 25 whatever its examples, so more of them would only add requests.
SHARDS = {"examples": 1, "coverage": 8, "fuzzing": 4, "stateful": 4}
# CPython 3.11 (before 3.12) may fail `ast.parse` when threads parse at once (gh-106905), and
# Hypothesis parses source to describe strategies: a run that meets it is run again, whole, since
# its shard is deterministic.
THREAD_RACE = "AST constructor recursion depth mismatch"


class ThreadRace(Exception):
    """A Schemathesis run broken by the interpreter's ast race under threads (not by the service):
    run it again. Seen as Schemathesis's error, or as a stateful phase that sent no request though
    the document links it."""


@dataclass(frozen=True)
class Shard:
    """One Schemathesis run: one phase, and the slice `index` of `count` of its cases."""

    phase: str
    index: int = 0
    count: int = 1

    def seed(self, seed: int) -> int:
        """Generated phases draw other cases per shard; the coverage phase enumerates the same list
        in each."""
        return seed + self.index if self.phase in ("fuzzing", "stateful") else seed

    def settings(self, seed: int, max_examples: int) -> tuple[int, int, tuple[str, ...]]:
        """The seed, examples and phases this shard runs with, from the audit's."""
        return self.seed(seed), self.max_examples(max_examples), (self.phase,)

    def max_examples(self, max_examples: int) -> int:
        return (
            math.ceil(max_examples / self.count)
            if self.phase in ("fuzzing", "stateful")
            else max_examples
        )


def shards(phases: tuple[str, ...]) -> list[Shard]:
    """The runs of an audit's Schemathesis phases, in their fixed order."""
    return [
        Shard(phase, index, SHARDS[phase])
        for phase in PHASES
        if phase in phases
        for index in range(SHARDS[phase])
    ]


def run_schemathesis(
    api: str,
    *,
    base_url: str,
    token: str | None,
    targets: Targets,
    results: Recorder,
    redactor: Redactor,
    seed: int = DEFAULT_SEED,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    phases: tuple[str, ...] = PHASES,
    on_progress: Callable[[FuzzProgress], None] | None = None,
    throttle: Throttle | None = None,
    shard: Shard | None = None,
    limits: AnswerLimits | None = None,
    turned_away: frozenset[TargetKey] = frozenset(),
    cuts: CutAnswers | None = None,
) -> None:
    """Run Schemathesis on one API (every phase in one run, or one shard) and record every check
    outcome into `results`, every answer read within `limits` (each one cut counted in `cuts`, for
    `cut_answer_gaps`); an answer that turns the audit's token away from something in
    `turned_away` is judged by no check (a gap of the audit: audit.turned_away_targets)."""
    if shard is not None:
        seed, max_examples, phases = shard.settings(seed, max_examples)
    schema = load_schema(
        api,
        results.policy,
        base_url=base_url,
        token=token,
        seed=seed,
        max_examples=max_examples,
        phases=phases,
    )
    throttle = throttle or Throttle()
    limits = limits or AnswerLimits()
    bound_schemathesis(base_url, limits, cuts)
    _configure(schema, api, targets, throttle, shard, limits.seconds)
    # Schemathesis runs the document's checks
    ours = ResponseJudge(api, results, redactor, targets=targets)
    retry = ThrottledRetry(
        throttle,
        limits,
        _met_by_chance(api, results, redactor, targets),
        cuts,
        ours.judge_cleared_gateway_error,
    )
    refusal = Refusal(api, token, turned_away)
    _judge_each_answer(schema, ours, retry, refusal)
    progress = FuzzProgress()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            record_scenario(api, event, results, redactor, progress, retry, targets, refusal)
        else:
            _record_event(api, event, results, redactor, progress)
        if on_progress is not None:
            on_progress(progress)
    if shard is not None and shard.phase == "stateful" and progress.cases == 0 and _has_links(api):
        raise ThreadRace(
            "its stateful phase sent no request, though the document links the operation to itself"
        )


def _judge_each_answer(
    schema: Any, ours: ResponseJudge, retry: ThrottledRetry, refusal: Refusal
) -> None:
    """Hook our per-response checks in after each call: a throttled answer waited out first, an
    answer that turns the audit's token away judged by none."""

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        if retry.wait_out(case, response) and not refusal.of(
            response.status_code,
            first_values(response.request.headers),
            case.query,
            case.path_parameters,
        ):
            ours.judge(exchange_from_schemathesis(response))


def _met_by_chance(
    api: str, results: Recorder, redactor: Redactor, targets: Targets
) -> Callable[[Exchange], object]:
    """How a throttled answer is judged: Schemathesis never sees it (its hook puts the answer to the
    request sent again in its place), so the document's checks are run on it too, built when the
    first one comes."""
    judges: list[ResponseJudge] = []

    def judge(exchange: Exchange) -> object:
        if not judges:
            judges.append(
                ResponseJudge(api, results, redactor, DocumentJudge(api, results.policy), targets)
            )
        return judges[0].judge_met_by_chance(exchange)

    return judge


def _configure(
    schema: Any,
    api: str,
    targets: Targets,
    throttle: Throttle,
    shard: Shard | None,
    request_timeout: float,
) -> None:
    """The run's timeout, its one rate limiter, the coverage shard's slice, the known-good case."""
    schema.config.update(request_timeout=request_timeout)
    if throttle.limiter is not None:  # one limiter for every request of the audit
        schema.config.rate_limit = throttle.limiter
    if shard is not None and shard.count > 1 and shard.phase == "coverage":
        schema.hook(slice_hook(shard))
    schema.hook(known_good_case_hook(api, targets))


def _record_event(
    api: str, event: Any, results: Recorder, redactor: Redactor, progress: FuzzProgress
) -> None:
    """What an event of the run other than a scenario tells the audit: work it could not do, or why
    it stopped."""
    if isinstance(event, events.PhaseStarted):
        progress.phase = str(event.phase.name)
    if isinstance(event, events.NonFatalError) and THREAD_RACE in str(event.value):
        raise ThreadRace(str(event.value))
    if isinstance(event, events.NonFatalError) and isinstance(
        event.value, requests.TooManyRedirects
    ):
        results.gap(Gap(api, redirect_loop(event.label)))
    elif isinstance(event, events.NonFatalError) and _cut(event.value):
        return  # counted where it was cut, said by cut_answer_gaps
    elif isinstance(event, events.NonFatalError):
        slow = isinstance(event.value, requests.Timeout)
        remedy = SLOW_SERVICE if slow else ""
        results.gap(
            Gap(
                api,
                quoted(redactor.text(f"Schemathesis could not test the operation: {event.value}")),
                remedy,
            )
        )
    elif isinstance(event, events.FatalError):
        stopped = redactor.text(f"Schemathesis stopped: {event.exception}")
        results.gap(Gap(api, quoted(stopped)))
    elif isinstance(event, events.EngineFinished) and event.stop_reason.skip_explanation:
        results.notes.append(
            f"{api}: Schemathesis stopped early: {event.stop_reason.skip_explanation}"
        )


def redirect_loop(label: str) -> str:
    """The gap of an operation whose answers redirect within the service's origin past
    MAX_REDIRECTS: the same words for each of its requests, so it is named once."""
    return (
        f"{label} answered with more than {MAX_REDIRECTS} redirects within the service's origin "
        "(a loop): not followed further"
    )


def _cut(error: BaseException | None) -> bool:
    """Whether an error Schemathesis reports is an answer cut at a limit (maybe wrapped, as a
    hook's error)."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, AnswerOverLimit):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def api_root(api: str, base_url: str) -> str:
    """The URL path under which every request to `api` at `base_url` goes."""
    return urlsplit(base_url.rstrip("/") + api_document(api).base_path + "/").path


def cut_answer_gaps(api: str, base_url: str, cuts: CutAnswers, redactor: Redactor) -> list[Gap]:
    """The answers to Schemathesis's requests for `api` (at `base_url`) that were cut at a limit:
    one gap for each why, how many and the first request, whichever phase, probe or check sent
    them."""
    root = api_root(api, base_url)
    return [
        Gap(
            api,
            redactor.text(
                f"Schemathesis could not test the operation: {count} of its requests "
                + ("got an answer that was not read: " if sent else "were not sent: ")
                + f"{why} (the first: {first})"
            ),
            remedy,
        )
        for sent, why, remedy, count, first in cuts.take(root)
    ]


def _has_links(api: str) -> bool:
    spec = operation(api).document.spec
    return any(
        "links" in response
        for item in spec.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict)
        for response in (op.get("responses") or {}).values()
        if isinstance(response, dict)
    )


def slice_hook(shard: Shard) -> Callable[[Any, Any], bool]:
    """A `filter_case` hook keeping this shard's slice of the cases, by their order of
    generation."""
    seen = 0

    def filter_case(context: Any, case: Any) -> bool:
        nonlocal seen
        seen += 1
        return (seen - 1) % shard.count == shard.index

    return filter_case
