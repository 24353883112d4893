"""One audit of a target: per API, our scenario checks (every response they get judged too), then
Schemathesis."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from evalmock.contract.targets import ProjectTarget
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import Skip, Undone, Violation
from evalmock.harness.checks.registry import Check, scenario_checks
from evalmock.harness.checks.scenario import Scenario
from evalmock.harness.checks.target_keys import TargetKey
from evalmock.harness.results.audit_results import COUNT, UNSEEN_SKIP, Results, counted_word
from evalmock.harness.results.findings import Example, Gap
from evalmock.harness.results.ledger import Ledger
from evalmock.harness.run.answer_deadline import held_to_deadlines
from evalmock.harness.run.document_judge import DocumentJudge
from evalmock.harness.run.fuzzing import (
    Shard,
    ThreadRace,
    api_root,
    cut_answer_gaps,
    run_schemathesis,
    shards,
)
from evalmock.harness.run.judge import ResponseJudge, violation_example
from evalmock.harness.run.options import Audit, plan_audit
from evalmock.harness.run.preflight import check_target, turned_away_targets
from evalmock.harness.run.throttle import Throttle
from evalmock.harness.run.transport import HttpSender
from evalmock.harness.run.workers import worker_pool

SHARD_ATTEMPTS = (
    3  # a Schemathesis shard broken by the interpreter's thread race is run again, this often
)


class Reporter:
    """What the audit tells the live display; the default says nothing."""

    def done(self, count: int, total: int, text: str) -> None:
        """The `count`-th of `total` tasks finished (`text`: its API and label); called from a
        worker thread, as tasks finish, in any order."""

    def finish(self, text: str) -> None: ...

    def answered(self, seconds: float) -> None:
        """An answer came, `seconds` after its request was sent; called from a worker thread, for
        every answer of the audit."""


def audit_url(base_url: str, **options: object) -> Results:
    """Audit the service at `base_url` (options as `plan_audit` takes them); AuditError when it
    cannot start.

    results = audit_url("http://127.0.0.1:8080", targets="targets.toml")
    assert results.conforms, summary_text(results)   # evalmock.harness.report.terminal.summary_text
    """
    audit = plan_audit(base_url, **options)  # type: ignore[arg-type]
    check_target(audit)
    return run_audit(audit)


def run_audit(
    audit: Audit, reporter: Reporter | None = None, *, throttle: Throttle | None = None
) -> Results:
    """Audit every API of `audit`; `audit.workers` tasks (a scenario check, a Schemathesis shard) at
    a time, each recording apart, their outcomes then taken in one fixed order: the same verdict and
    findings for any number of workers. `throttle` (else one made from `audit.throttle`) is shared
    by every request."""
    if throttle is None:
        with Throttle(audit.throttle) as owned:
            return run_audit(audit, reporter, throttle=owned)
    reporter = reporter or Reporter()
    throttle.timed = reporter.answered
    preflight = Ledger(audit.policy)
    judges = PreflightJudges(audit, preflight)
    turned_away = turned_away_targets(audit, throttle, judges.met_by_chance, judges.cleared)
    results = Results(audit.policy, audit.apis)
    preflight.replay(results)
    for cut in audit.preflight_cuts:  # the checks never see these answers: named here
        results.gap(cut)
    plans = {api: _plan_api(api, audit, results) for api in audit.apis}
    with worker_pool(audit.workers) as pool:
        # The longest tasks start first (Schemathesis's shards, stateful the longest), so that with
        # several workers none is left running alone at the end; the outcomes are taken in the
        # plan's order all the same.
        every = sorted(
            ((api, task) for api, tasks in plans.items() for task in tasks),
            key=lambda t: t[1].priority,
        )
        finished = itertools.count(1)
        started = {}
        for api, task in every:
            started[id(task)] = future = pool.submit(task.run, audit, throttle, turned_away)
            future.add_done_callback(
                lambda _, text=f"{api}: {task.label}": reporter.done(
                    next(finished), len(every), text
                )
            )
        for api, tasks in plans.items():
            for task in tasks:
                started[id(task)].result().replay(results)
            name_cut_answers(api, audit, results)
            failed = sum(1 for f in results.failures if f.api == api)
            reporter.finish(f"{api}: {len(tasks)} tasks done, {failed} failed findings so far")
            results.skip_unexercised(api, unexercised_reason(audit.fuzz))
    results.throttling = throttle.report()
    return results


class PreflightJudges:
    """How the pre-flight's answers are judged (into `ledger`), as a scenario's are: a throttled
    one before it is waited out, by its API's response and document checks; a gateway's 502 or 504
    that asking again cleared, by the gateway error rule."""

    def __init__(self, audit: Audit, ledger: Ledger) -> None:
        self.audit = audit
        self.ledger = ledger
        self._judges: dict[str, ResponseJudge] = {}

    def _judge(self, api: str) -> ResponseJudge:
        if api not in self._judges:
            audit = self.audit
            document = DocumentJudge(api, audit.policy)
            self._judges[api] = ResponseJudge(
                api, self.ledger, audit.redactor, document, audit.targets
            )
        return self._judges[api]

    def met_by_chance(self, api: str, exchange: Exchange) -> object:
        return self._judge(api).judge_met_by_chance(exchange)

    def cleared(self, api: str, exchange: Exchange) -> object:
        return self._judge(api).judge_cleared_gateway_error(exchange)


@dataclass(frozen=True, eq=False)
class Task:
    """One unit of an audit's work: a scenario check or a Schemathesis shard, recording into its own
    Ledger."""

    api: str
    label: str
    check: Check | None = None
    shard: Shard | None = None
    project: ProjectTarget | None = (
        None  # the one project of a check run once a project (Check.each_project)
    )

    @property
    def priority(self) -> int:
        return PRIORITY.get(self.shard.phase, 0) if self.shard is not None else len(PRIORITY)

    def run(
        self, audit: Audit, throttle: Throttle, turned_away: frozenset[TargetKey] = frozenset()
    ) -> Ledger:
        if self.check is not None:
            return run_scenario(self.check, self.api, audit, throttle, self.project, turned_away)
        assert self.shard is not None
        return run_shard(self.api, audit, throttle, self.shard, turned_away)


# Schemathesis's phases, longest first
PRIORITY = {
    "stateful": 0,
    "coverage": 1,
    "fuzzing": 2,
    "examples": 3,
}


def _plan_api(api: str, audit: Audit, results: Results) -> list[Task]:
    """The scenario checks, then the Schemathesis shards, of one API, in the order their outcomes
    are taken."""
    chosen = [c for c in scenario_checks(api) if audit.only is None or c.name in audit.only]
    results.selected[api] = {c.name for c in chosen}
    tasks: list[Task] = []
    for check in (c for c in chosen if results.policy.runs(c.source)):
        projects = audit.targets.projects if check.each_project else ()
        if len(projects) > 1:
            # One task a project: against a slow service, walking 14 projects one after another took
            # 8 minutes.
            tasks += [
                Task(api, f"{check.name} {p.agent_id}/{p.project_id}", check=check, project=p)
                for p in projects
            ]
        else:
            tasks.append(Task(api, check.name, check=check))
    if audit.fuzz:
        tasks += [
            Task(api, f"Schemathesis {shard.phase} {shard.index + 1}/{shard.count}", shard=shard)
            for shard in shards(audit.phases)
        ]
    return tasks


def run_scenario(
    check: Check,
    api: str,
    audit: Audit,
    throttle: Throttle,
    project: ProjectTarget | None = None,
    turned_away: frozenset[TargetKey] = frozenset(),
) -> Ledger:
    """One scenario check, with its own client (on the targets narrowed to `project`, if given);
    every response it gets is judged by the response and document checks too."""
    ledger = Ledger(audit.policy)
    targets = (
        audit.targets
        if project is None
        else dataclasses.replace(audit.targets, projects=(project,))
    )
    judge = ResponseJudge(
        api, ledger, audit.redactor, DocumentJudge(api, audit.policy), audit.targets
    )

    def observe(observed_api: str, exchange: Exchange) -> None:
        judge.judge(exchange)

    with held_to_deadlines(
        httpx.Client(base_url=audit.base_url.rstrip("/"), timeout=audit.request_timeout)
    ) as client:
        sender = HttpSender(
            client,
            throttle,
            audit.limits,
            judge.judge_met_by_chance,
            judge.judge_cleared_gateway_error,
        )
        scenario = Scenario(
            sender,
            targets,
            token=audit.token,
            second_token=audit.second_token,
            observe=observe,
            turned_away=turned_away,
        )
        run_scenario_check(check, scenario, judge)
    if sender.unasked:
        ledger.count_note(unasked_note(api), sender.unasked)
    return ledger


def unasked_note(api: str) -> str:
    """The counted note of answers whose connection held bytes no request asked for."""
    return (
        f"{api}: {COUNT} {counted_word('answer')} came with bytes behind "
        f"{counted_word('it', 'them')} that no request asked for (an answer queued unasked: a "
        "response desync, the service's fault); each connection was closed, so no later request "
        "read them as its answer"
    )


def run_shard(
    api: str,
    audit: Audit,
    throttle: Throttle,
    shard: Shard,
    turned_away: frozenset[TargetKey] = frozenset(),
) -> Ledger:
    for _ in range(SHARD_ATTEMPTS):
        ledger = Ledger(audit.policy)
        try:
            run_schemathesis(
                api,
                base_url=audit.base_url,
                token=audit.token,
                targets=audit.targets,
                results=ledger,
                redactor=audit.redactor,
                seed=audit.seed,
                max_examples=audit.max_examples,
                phases=audit.phases,
                throttle=throttle,
                shard=shard,
                limits=audit.limits,
                turned_away=turned_away,
                cuts=audit.cut_answers,
            )
        except ThreadRace as race:
            error = race
            continue
        return ledger
    ledger = Ledger(audit.policy)
    ledger.gap(
        Gap(
            api,
            f"Schemathesis {shard.phase} shard {shard.index + 1}/{shard.count} could not run "
            "beside "
            f"the others ({error})",
            "Run the audit with --workers 1",
        )
    )
    return ledger


def name_cut_answers(api: str, audit: Audit, results: Results) -> None:
    """A gap for the answers to `api`'s Schemathesis requests cut at a limit, once every shard of
    it is done (Schemathesis keeps some such errors to itself)."""
    for gap in cut_answer_gaps(api, audit.base_url, audit.cut_answers, audit.redactor):
        results.gap(gap)
    if unasked := audit.cut_answers.take_unasked(api_root(api, audit.base_url)):
        results.count_note(unasked_note(api), unasked)


def run_scenario_check(check: Check, scenario: Scenario, judge: ResponseJudge) -> None:
    """Run one scenario check and record how it ended, and the notes it made on the way."""
    try:
        _run_scenario_check(check, scenario, judge)
    finally:
        for note in scenario.notes:
            said = judge.redactor.text(note)
            if said not in judge.results.notes:
                judge.results.notes.append(said)


def _run_scenario_check(check: Check, scenario: Scenario, judge: ResponseJudge) -> None:
    results, redactor = judge.results, judge.redactor
    try:
        check.func(scenario)  # type: ignore[misc]
    except Undone as undone:
        results.skipped(check, redactor.text(undone.reason), undone.kind)
        results.gap(Gap(check.api, redactor.text(undone.why), undone.remedy))
    except Skip as skip:
        results.skipped(check, redactor.text(skip.reason), skip.kind)
    except Violation as violation:
        exchange = violation.exchange or scenario.last
        example = violation_example(violation, judge.record(exchange), redactor, exchange)
        if exchange is not None:
            judge.breach(check, exchange, example)
        else:
            results.breach(check, example, shape="")
    except httpx.HTTPError as exc:
        message = redactor.text(f"the request failed: {type(exc).__name__}: {exc}")
        results.breach(check, Example(message, judge.record(scenario.last)), shape="")
    else:
        results.passed(check)


def unexercised_reason(fuzzed: bool) -> Callable[[Check], str | None]:
    """Why a check that never met a response it speaks about did not run (scenario checks not
    chosen: no reason)."""

    def reason(check: Check) -> str | None:
        if check.kind == "scenario":
            return None
        if check.kind == "schemathesis" and not fuzzed:
            return "Schemathesis did not run (--no-fuzz)"
        return UNSEEN_SKIP

    return reason
