"""One audit of a target: per API, our scenario checks (every response they get judged too), then Schemathesis."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from evalmock.contract.documents import APIS as DOCUMENTS
from evalmock.contract.operations import Operation, operation
from evalmock.contract.schemas import schema_errors
from evalmock.contract.targets import ProjectTarget, Targets, TargetsError, load_targets
from evalmock.defaults import DEFAULT_REQUEST_TIMEOUT, MAX_SECONDS
from evalmock.harness.checks.authentication import MADE_UP_CREDENTIALS
from evalmock.harness.checks.error_answers import CODE_OF_STATUS
from evalmock.harness.checks.registry import Check, scenario_checks
from evalmock.harness.document_checks import DocumentJudge
from evalmock.harness.exchange import Exchange
from evalmock.harness.outcomes import Skip, TargetKey, Undone, Violation, target_key
from evalmock.harness.policy import DEFAULT_PROFILE, Policy
from evalmock.harness.redact import Redactor
from evalmock.harness.response_judge import ResponseJudge, violation_example
from evalmock.harness.results import UNSEEN_SKIP, Example, Gap, Ledger, Results
from evalmock.harness.scenario import Scenario
from evalmock.harness.schemathesis_config import PHASES
from evalmock.harness.schemathesis_run import Shard, ThreadRace, run_schemathesis, shards
from evalmock.harness.throttle import Throttle, ThrottleError, ThrottleOptions
from evalmock.harness.workers import worker_pool

APIS = tuple(DOCUMENTS)
MADE_UP_UUID = "00000000-0000-4000-8000-00000000e404"  # a resource no service holds, asked for by probe_answers
REACHABILITY_TIMEOUT = 5.0  # seconds to connect, when the target is first tried
EXIT_USAGE, EXIT_UNREACHABLE = 2, 3  # besides a Verdict's own exit codes
SHARD_ATTEMPTS = 3  # a Schemathesis shard broken by the interpreter's thread race is run again, this often


class AuditError(Exception):
    """An audit that cannot start: bad options or targets (exit code 2), or a target that does not answer (3)."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Audit:
    """What to audit and how: the target, which APIs, tokens and targets, the policy and the generation budget."""

    base_url: str
    targets: Targets = field(default_factory=Targets)
    apis: tuple[str, ...] = APIS
    token: str | None = None
    second_token: str | None = None
    policy: Policy = field(default_factory=Policy)
    seed: int = 42
    max_examples: int = 25
    fuzz: bool = True  # run Schemathesis after our scenarios
    phases: tuple[str, ...] = PHASES
    only: frozenset[str] | None = None  # run only these scenario checks (None: all)
    throttle: ThrottleOptions = field(default_factory=ThrottleOptions)  # waiting out throttling; --rate-limit
    workers: int = 1  # scenario checks and Schemathesis shards run side by side; verdicts never depend on it
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT  # seconds an answer is waited for; one without is a gap

    @cached_property
    def redactor(self) -> Redactor:
        """One for the whole audit, so that a secret learned from one answer stays out of every output."""
        redactor = Redactor(self.token, self.second_token, self.targets.expired_token, self.targets.revoked_token,
                            shown=MADE_UP_CREDENTIALS)
        if self.targets.no_read_token:
            redactor.learn(self.targets.no_read_token)
        return redactor


class Reporter:
    """What the audit tells the live display; the default says nothing."""

    def done(self, count: int, total: int, text: str) -> None:
        """The `count`-th of `total` tasks finished (`text`: its API and label); called from a worker thread, as
        tasks finish, in any order."""

    def finish(self, text: str) -> None: ...


def plan_audit(
    base_url: str,
    *,
    targets: str | Path | None = None,
    token: str | None = None,
    second_token: str | None = None,
    apis: tuple[str, ...] = APIS,
    strict: bool = False,
    profile: str = DEFAULT_PROFILE,
    seed: int = 42,
    max_examples: int = 25,
    fuzz: bool = True,
    workers: int = 1,
    rate_limit: str | None = None,
    retries: int | None = None,
    max_wait: float | None = None,
    wait_budget: float | None = None,
    request_timeout: float | None = None,
) -> Audit:
    """The audit that `evalmock contract`, the pytest plugin and `audit_url` run for the same options: the targets
    file read, and each token taken from the option, else the environment (EVALMOCK_TOKEN, EVALMOCK_SECOND_TOKEN),
    else the targets' [auth]."""
    problem = check_base_url(base_url)
    if problem:
        raise AuditError(problem)
    if workers < 1:
        raise AuditError(f"--workers must be 1 or more, got {workers}")
    if request_timeout is not None and not 0 < request_timeout <= MAX_SECONDS:
        raise AuditError(f"--request-timeout must be more than 0 and at most {MAX_SECONDS:g} seconds, got "
                         f"{request_timeout:g}")
    try:
        known = load_targets(targets) if targets else Targets()
        policy = Policy(strict=strict, profile=profile)
        defaults = ThrottleOptions()
        throttle = ThrottleOptions(
            retries=defaults.retries if retries is None else retries,
            max_wait=defaults.max_wait if max_wait is None else max_wait,
            budget=defaults.budget if wait_budget is None else wait_budget,
            rate=rate_limit,
        )
    except (TargetsError, ThrottleError, ValueError) as exc:
        raise AuditError(str(exc)) from None
    return Audit(
        base_url=base_url.rstrip("/"),
        targets=known,
        apis=apis,
        token=token or os.environ.get("EVALMOCK_TOKEN") or known.token or None,
        second_token=second_token or os.environ.get("EVALMOCK_SECOND_TOKEN") or known.second_token or None,
        policy=policy,
        seed=seed,
        max_examples=max_examples,
        fuzz=fuzz,
        throttle=throttle,
        workers=workers,
        request_timeout=DEFAULT_REQUEST_TIMEOUT if request_timeout is None else request_timeout,
    )


def audit_url(base_url: str, **options: object) -> Results:
    """Audit the service at `base_url` (options as `plan_audit` takes them); AuditError when it cannot start.

        results = audit_url("http://127.0.0.1:8080", targets="targets.toml")
        assert results.conforms, summary_text(results)   # evalmock.harness.report.summary_text
    """
    audit = plan_audit(base_url, **options)  # type: ignore[arg-type]
    check_target(audit)
    return run_audit(audit)


def check_target(audit: Audit) -> None:
    """AuditError when the target does not answer HTTP, or answers no audited API at its base URL (exit 3), or
    refuses the audit's token or its caller on every audited API (exit 2)."""
    # A connection within REACHABILITY_TIMEOUT, an answer within the audit's own timeout (a service that starts
    # cold may take its time).
    timeout = httpx.Timeout(audit.request_timeout, connect=REACHABILITY_TIMEOUT)
    unreachable = reachable(audit.base_url, timeout)
    if unreachable:
        raise AuditError(f"{audit.base_url} is unreachable ({unreachable})", EXIT_UNREACHABLE)
    if absent := absent_apis(audit, probe_answers(audit, timeout)):
        raise AuditError(f"no audited API answers at {audit.base_url}: {absent}. Is the base URL right? A "
                         "gateway's stage or prefix path (https://host/prod) belongs in it, and nothing more",
                         EXIT_UNREACHABLE)
    refused = refused_caller(audit, timeout)
    if refused and all(status == 401 for status in refused.values()):
        raise AuditError(f"every audited API refused the token: {_answers(refused)}. Is the token one the service "
                         "takes now (--token, EVALMOCK_TOKEN or [auth].token)? An expired or revoked one gets 401 "
                         "everywhere, and every check would then judge 401s", EXIT_USAGE)
    if refused:
        raise AuditError(f"every audited API refused the caller: {_answers(refused)}. Does the token read the targets' "
                         "projects and test cases, and does the gateway let this machine through (an IP allowlist, "
                         "a WAF)? Every check would otherwise judge the refusals", EXIT_USAGE)


def check_base_url(base_url: str) -> str | None:
    """Why a base URL is unusable, or None when it is fine."""
    try:
        parts = urlsplit(base_url)
    except ValueError as exc:  # an unclosed IPv6 bracket
        return f"the base URL is not a URL ({exc}), got {base_url!r}"
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return f"the base URL must be an http(s) URL such as http://127.0.0.1:8080, got {base_url!r}"
    if parts.query or parts.fragment:
        return "the base URL must not carry a query or fragment"
    if any(character.isspace() for character in base_url) or not parts.hostname:
        return f"the base URL must name a host, without spaces, got {base_url!r}"
    try:
        parts.port  # noqa: B018  (urlsplit checks the port when it is read)
    except ValueError as exc:
        return f"the base URL's port is not a port ({exc}), got {base_url!r}"
    path = parts.path.rstrip("/")
    for document in DOCUMENTS.values():
        if document.base_path and path.endswith(document.base_path):
            root = base_url.rstrip("/").removesuffix(document.base_path)
            return (f"the base URL ends in {document.base_path}, which the {document.name} API's document adds to "
                    f"every path itself: use {root}")
    return None


def reachable(base_url: str, timeout: httpx.Timeout) -> str | None:
    """None when the target answers HTTP at all (any status), else why not."""
    try:
        httpx.get(base_url.rstrip("/") + "/", timeout=timeout)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return None


def probe_answers(audit: Audit, timeout: httpx.Timeout) -> dict[str, httpx.Response]:
    """Each audited API's answer to one request, with the audit's token, for a made-up resource (every path and
    required query parameter a made-up id); an API whose request failed is left out (it answered the reachability
    check: the audit will say what goes wrong)."""
    answers = {}
    for api in audit.apis:
        op = operation(api)
        params = {name: MADE_UP_UUID for name, parameter in op.parameters.items() if parameter.get("in") == "path"}
        query = {name: MADE_UP_UUID for name, parameter in op.query_parameters().items() if parameter.get("required")}
        if (response := _get(audit, op.url_path(**params), query, timeout)) is not None:
            answers[api] = response
    return answers


def absent_apis(audit: Audit, answers: dict[str, httpx.Response]) -> str | None:
    """None when some audited API answers at the base URL; else what each answered instead. A service that follows
    its page answers the made-up resource in the document's shape (the 404 of an unknown one, with the test-set
    page's code agent-not-found; a 400 or 401 error body); a 404 that is not is the answer of a server that has no
    such path (a base URL without a gateway's stage path, or with one too many: every request would then fail a
    rule)."""
    shown = []
    for api in audit.apis:
        response = answers.get(api)
        if response is None or response.status_code != 404 or _is_the_apis_404(api, response):
            return None
        kind = response.headers.get("content-type", "no content type").split(";")[0]
        shown.append(f"{_request_line(response)} -> 404 ({kind}, not the {api} API's 404 body)")
    return "; ".join(shown)


def refused_caller(audit: Audit, timeout: httpx.Timeout) -> dict[str, int]:
    """Each request's status, when every audited API whose targets name something known (a project, a test case)
    answered the audit's token with 401 or 403 when asked for it; else empty. The targets' projects are ones the
    token reads: a 401 (the pages' answer to a missing, malformed, expired or revoked token) says the token is no
    longer one the service takes, a 403 that the caller is turned away (a gateway's allowlist, a token for other
    projects). A made-up resource would not tell: a token without read on a project may get any 4xx."""
    if not audit.token:
        return {}
    refused = {}
    for api in audit.apis:
        request = _known_request(api, audit.targets)
        if request is None:
            continue
        response = _get(audit, *request, timeout)
        if response is None or response.status_code not in (401, 403):
            return {}  # a failed request: the audit will say what goes wrong
        refused[_request_line(response)] = response.status_code
    return refused


def turned_away_targets(audit: Audit, throttle: Throttle | None = None) -> frozenset[TargetKey]:
    """The projects and test cases of the targets whose plain request the audit's token gets 403 for: the service,
    or a gateway before it, turns the caller away from them (an allowlist, a token for other projects). What any
    request for them with that token gets is then the refusal's, not the service's answer to what else it asks, and
    no rule judges it (TurnedAway); a 403 for anything else is judged as ever. One request a project and test case,
    before the audit, each waited out if throttled (`throttle`, the audit's: its waits count in its budget)."""
    if not audit.token:
        return frozenset()
    timeout = httpx.Timeout(audit.request_timeout, connect=REACHABILITY_TIMEOUT)
    throttle = throttle or Throttle(audit.throttle)
    refused = set()
    for key, path, query in (asked for api in audit.apis for asked in _target_requests(api, audit.targets)):
        response, _ = throttle.send(
            lambda path=path, query=query: _get(audit, path, query, timeout),
            lambda answer: (answer.status_code, answer.headers) if answer is not None else (0, {}),
        )
        if response is not None and response.status_code == 403:  # None: no answer, which the checks will say
            refused.add(key)
    return frozenset(refused)


def _get(audit: Audit, path: str, query: dict[str, str], timeout: httpx.Timeout) -> httpx.Response | None:
    """The answer to a GET of `path` with the audit's token, or None when the request failed."""
    headers = {"Authorization": f"Bearer {audit.token}"} if audit.token else {}
    try:
        return httpx.get(audit.base_url.rstrip("/") + path, params=query, headers=headers, timeout=timeout)
    except httpx.HTTPError:
        return None


def _request_line(response: httpx.Response) -> str:
    return f"GET {response.request.url.raw_path.decode('ascii')}"


def _answers(statuses: dict[str, int]) -> str:
    return "; ".join(f"{request} -> {status}" for request, status in statuses.items())


def _known_request(api: str, targets: Targets) -> tuple[str, dict[str, str]] | None:
    """The path and query of a request for the first thing the targets say `api` holds, or None."""
    first = next(iter(_target_requests(api, targets)), None)
    return None if first is None else first[1:]


def _target_requests(api: str, targets: Targets) -> list[tuple[TargetKey, str, dict[str, str]]]:
    """For each thing the targets say `api` holds (a project, a test case): its key, and a plain request's path and
    query."""
    op = operation(api)
    if api == "test-set":
        return [(target_key(api, {"agentId": p.agent_id}, {"projectId": p.project_id}),
                 op.url_path(agentId=p.agent_id), {"projectId": p.project_id}) for p in targets.projects]
    return [(target_key(api, {"test_case_uuid": t.uuid}, {}), op.url_path(test_case_uuid=t.uuid), {})
            for t in targets.test_cases]


def _is_the_apis_404(api: str, response: httpx.Response) -> bool:
    op = operation(api)
    declared = op.responses.get("404")
    if declared is None or not _is_documented_body(op, declared.schema, response):
        return False
    if api != "test-set":
        return True
    error = response.json().get("error")  # a documented body: the envelope
    return isinstance(error, dict) and error.get("code") == CODE_OF_STATUS[404]


def _is_documented_body(op: Operation, schema: object, response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return next(schema_errors(op.document.spec, schema, body), None) is None


def run_audit(audit: Audit, reporter: Reporter | None = None, *, throttle: Throttle | None = None) -> Results:
    """Audit every API of `audit`; `audit.workers` tasks (a scenario check, a Schemathesis shard) at a time, each
    recording apart, their outcomes then taken in one fixed order: the same verdict and findings for any number
    of workers. `throttle` (else one made from `audit.throttle`) is shared by every request."""
    reporter = reporter or Reporter()
    throttle = throttle or Throttle(audit.throttle)
    turned_away = turned_away_targets(audit, throttle)
    results = Results(audit.policy, audit.apis)
    plans = {api: _plan_api(api, audit, results) for api in audit.apis}
    with worker_pool(audit.workers) as pool:
        # The longest tasks start first (Schemathesis's shards, stateful the longest), so that with several
        # workers none is left running alone at the end; the outcomes are taken in the plan's order all the same.
        every = sorted(((api, task) for api, tasks in plans.items() for task in tasks), key=lambda t: t[1].priority)
        finished = itertools.count(1)
        started = {}
        for api, task in every:
            started[id(task)] = future = pool.submit(task.run, audit, throttle, turned_away)
            future.add_done_callback(
                lambda _, text=f"{api}: {task.label}": reporter.done(next(finished), len(every), text))
        for api, tasks in plans.items():
            for task in tasks:
                started[id(task)].result().replay(results)
            failed = sum(1 for f in results.failures if f.api == api)
            reporter.finish(f"{api}: {len(tasks)} tasks done, {failed} failed findings so far")
            results.skip_unexercised(api, unexercised_reason(audit.fuzz))
    results.throttling = throttle.report()
    return results


@dataclass(frozen=True, eq=False)
class Task:
    """One unit of an audit's work: a scenario check or a Schemathesis shard, recording into its own Ledger."""

    api: str
    label: str
    check: Check | None = None
    shard: Shard | None = None
    project: ProjectTarget | None = None  # the one project of a check run once a project (Check.each_project)

    @property
    def priority(self) -> int:
        return PRIORITY.get(self.shard.phase, 0) if self.shard is not None else len(PRIORITY)

    def run(self, audit: Audit, throttle: Throttle, turned_away: frozenset[TargetKey] = frozenset()) -> Ledger:
        if self.check is not None:
            return run_scenario(self.check, self.api, audit, throttle, self.project, turned_away)
        assert self.shard is not None
        return run_shard(self.api, audit, throttle, self.shard, turned_away)


PRIORITY = {"stateful": 0, "coverage": 1, "fuzzing": 2, "examples": 3}  # Schemathesis's phases, longest first


def _plan_api(api: str, audit: Audit, results: Results) -> list[Task]:
    """The scenario checks, then the Schemathesis shards, of one API, in the order their outcomes are taken."""
    chosen = [c for c in scenario_checks(api) if audit.only is None or c.name in audit.only]
    results.selected[api] = {c.name for c in chosen}
    tasks: list[Task] = []
    for check in (c for c in chosen if results.policy.runs(c.source)):
        projects = audit.targets.projects if check.each_project else ()
        if len(projects) > 1:
            # One task a project: against a slow service, walking 14 projects one after another took 8 minutes.
            tasks += [Task(api, f"{check.name} {p.agent_id}/{p.project_id}", check=check, project=p) for p in projects]
        else:
            tasks.append(Task(api, check.name, check=check))
    if audit.fuzz:
        tasks += [Task(api, f"Schemathesis {shard.phase} {shard.index + 1}/{shard.count}", shard=shard)
                  for shard in shards(audit.phases)]
    return tasks


def run_scenario(check: Check, api: str, audit: Audit, throttle: Throttle,
                 project: ProjectTarget | None = None, turned_away: frozenset[TargetKey] = frozenset()) -> Ledger:
    """One scenario check, with its own client (on the targets narrowed to `project`, if given); every response it
    gets is judged by the response and document checks too."""
    ledger = Ledger(audit.policy)
    targets = audit.targets if project is None else dataclasses.replace(audit.targets, projects=(project,))
    judge = ResponseJudge(api, ledger, audit.redactor, DocumentJudge(api, audit.policy), audit.targets)

    def observe(observed_api: str, exchange: Exchange) -> None:
        judge.judge(exchange)

    with httpx.Client(base_url=audit.base_url.rstrip("/"), timeout=audit.request_timeout) as client:
        scenario = Scenario(client, targets, token=audit.token, second_token=audit.second_token,
                            observe=observe, throttle=throttle, turned_away=turned_away)
        run_scenario_check(check, scenario, judge)
    return ledger


def run_shard(api: str, audit: Audit, throttle: Throttle, shard: Shard,
              turned_away: frozenset[TargetKey] = frozenset()) -> Ledger:
    for _ in range(SHARD_ATTEMPTS):
        ledger = Ledger(audit.policy)
        try:
            run_schemathesis(
                api, base_url=audit.base_url, token=audit.token, targets=audit.targets, results=ledger,
                redactor=audit.redactor, seed=audit.seed, max_examples=audit.max_examples, phases=audit.phases,
                throttle=throttle, shard=shard, request_timeout=audit.request_timeout, turned_away=turned_away,
            )
        except ThreadRace as race:
            error = race
            continue
        return ledger
    ledger = Ledger(audit.policy)
    ledger.gap(Gap(api, f"Schemathesis {shard.phase} shard {shard.index + 1}/{shard.count} could not run beside "
                        f"the others ({error})", "Run the audit with --workers 1"))
    return ledger


def run_scenario_check(check: Check, scenario: Scenario, judge: ResponseJudge) -> None:
    results, redactor = judge.results, judge.redactor
    try:
        check.func(scenario)  # type: ignore[misc]
    except Undone as undone:
        results.skipped(check, redactor.text(undone.reason))
        results.gap(Gap(check.api, redactor.text(undone.why), undone.remedy))
    except Skip as skip:
        results.skipped(check, redactor.text(skip.reason))
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
    """Why a check that never met a response it speaks about did not run (scenario checks not chosen: no reason)."""

    def reason(check: Check) -> str | None:
        if check.kind == "scenario":
            return None
        if check.kind == "schemathesis" and not fuzzed:
            return "Schemathesis did not run (--no-fuzz)"
        return UNSEEN_SKIP

    return reason
