"""One audit of a target: our scenario checks (with every response checked) and then the Schemathesis run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from evalmock.harness.checks import Check, Exchange, Skip, Violation, response_checks, scenario_checks
from evalmock.harness.fuzz import PHASES, FuzzProgress, run_schemathesis
from evalmock.harness.operations import operation
from evalmock.harness.redact import Redactor
from evalmock.harness.results import FAILED, PASSED, SKIPPED, RequestRecord, Results
from evalmock.harness.scenario import Scenario
from evalmock.harness.targets import Targets

APIS = ("test-set", "gradient")
REQUEST_TIMEOUT = 15.0


@dataclass(frozen=True)
class Audit:
    """What to audit and how hard: the target, which APIs, tokens and targets, and the generation budget."""

    base_url: str
    targets: Targets = field(default_factory=Targets)
    apis: tuple[str, ...] = APIS
    token: str | None = None
    second_token: str | None = None
    seed: int = 42
    max_examples: int = 25
    fuzz: bool = True  # run Schemathesis after our scenarios
    phases: tuple[str, ...] = PHASES
    only: frozenset[str] | None = None  # run only these scenario checks (None: all)

    @property
    def redactor(self) -> Redactor:
        return Redactor(self.token, self.second_token)


class Reporter:
    """What the audit tells the live display; the default says nothing."""

    def stage(self, text: str) -> None: ...

    def advance(self, text: str) -> None: ...

    def finish(self, text: str) -> None: ...


def run_audit(audit: Audit, reporter: Reporter | None = None) -> Results:
    reporter = reporter or Reporter()
    results = Results()
    for api in audit.apis:
        run_scenarios(api, audit, results, reporter)
        if audit.fuzz:
            reporter.stage(f"{api}: Schemathesis ({', '.join(audit.phases)})")
            seen = FuzzProgress()

            def progress(p: FuzzProgress, api: str = api, seen: FuzzProgress = seen) -> None:
                seen.cases, seen.failures = p.cases, p.failures
                reporter.advance(f"{api}: Schemathesis {p.phase}: {p.cases} cases, {p.failures} failures")

            run_schemathesis(
                api, base_url=audit.base_url, token=audit.token, targets=audit.targets, results=results,
                redactor=audit.redactor, seed=audit.seed, max_examples=audit.max_examples, phases=audit.phases,
                on_progress=progress,
            )
            reporter.finish(f"{api}: Schemathesis done: {seen.cases} cases, {seen.failures} failed checks")
        _note_unexercised(api, results)
    return results


def run_scenarios(api: str, audit: Audit, results: Results, reporter: Reporter) -> None:
    """Run the scenario checks of one API; every response they get also goes through the response checks."""
    label = operation(api).label
    redactor = audit.redactor
    checks = [c for c in scenario_checks(api) if audit.only is None or c.name in audit.only]
    reporter.stage(f"{api}: {len(checks)} scenario checks")

    def observe(observed_api: str, exchange: Exchange) -> None:
        check_response(observed_api, exchange, results, redactor)

    with httpx.Client(base_url=audit.base_url.rstrip("/"), timeout=REQUEST_TIMEOUT) as client:
        for check in checks:
            scenario = Scenario(client, audit.targets, token=audit.token, second_token=audit.second_token,
                                observe=observe)
            run_scenario_check(check, scenario, label, results, redactor)
            reporter.advance(f"{api}: {check.name}")
    failed = sum(1 for f in results.failures if f.api == api and f.source == "scenario")
    reporter.finish(f"{api}: {len(checks)} scenario checks done, {failed} failed")


def run_scenario_check(check: Check, scenario: Scenario, label: str, results: Results, redactor: Redactor) -> None:
    try:
        check.func(scenario)
    except Skip as skip:
        results.record(check.api, label, check.name, SKIPPED, source="scenario", rule=check.rule,
                       message=redactor.text(skip.reason))
    except Violation as violation:
        exchange = violation.exchange or scenario.last
        results.record(check.api, label, check.name, FAILED, source="scenario", rule=check.rule,
                       message=redactor.text(violation.render()), request=request_record(exchange, redactor))
    except httpx.HTTPError as exc:
        results.record(check.api, label, check.name, FAILED, source="scenario", rule=check.rule,
                       message=redactor.text(f"the request failed: {type(exc).__name__}: {exc}"),
                       request=request_record(scenario.last, redactor))
    else:
        results.record(check.api, label, check.name, PASSED, source="scenario", rule=check.rule)


def check_response(api: str, exchange: Exchange, results: Results, redactor: Redactor,
                   checks: Iterable[Check] | None = None) -> None:
    """Run the per-response checks of `api` on one exchange and record what applied."""
    label = operation(api).label
    for check in checks if checks is not None else response_checks(api):
        try:
            applied = check.func(exchange)
        except Violation as violation:
            results.record(api, label, check.name, FAILED, source="response", rule=check.rule,
                           message=redactor.text(violation.render()), request=request_record(exchange, redactor))
        else:
            if applied:
                results.record(api, label, check.name, PASSED, source="response", rule=check.rule)


def request_record(exchange: Exchange | None, redactor: Redactor) -> RequestRecord | None:
    if exchange is None:
        return None
    return RequestRecord(
        method=exchange.method,
        url=redactor.text(exchange.url),
        headers=redactor.headers(dict(exchange.request_headers)),
        status=exchange.status,
        response_excerpt=redactor.text(exchange.text[:500]),
        curl=redactor.curl(exchange.method, exchange.url, exchange.request_headers),
    )


def _note_unexercised(api: str, results: Results) -> None:
    label = operation(api).label
    for check in response_checks(api):
        if not results.has_seen(api, check.name):
            results.record(api, label, check.name, SKIPPED, source="response", rule=check.rule,
                           message="no response this check speaks about was seen")
