"""What to audit and how: the target, APIs, tokens and targets, the policy, throttling and the
generation budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from evalmock import environment
from evalmock.contract.base_url import base_url_problem
from evalmock.contract.documents import APIS as DOCUMENTS
from evalmock.contract.targets import Targets, TargetsError, load_targets
from evalmock.defaults import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SEED,
    MAX_SECONDS,
)
from evalmock.exits import EvalmockError
from evalmock.harness.checks.authentication import MADE_UP_CREDENTIALS
from evalmock.harness.checks.policy import DEFAULT_PROFILE, Policy
from evalmock.harness.results.findings import Gap
from evalmock.harness.run.answer_limits import AnswerLimits
from evalmock.harness.run.bounded_requests import CutAnswers
from evalmock.harness.run.schemathesis_schema import PHASES
from evalmock.harness.run.throttle import ThrottleError, ThrottleOptions
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted

APIS = tuple(DOCUMENTS)


class AuditError(EvalmockError):
    """An audit that cannot start: bad options or targets (exit code 2), or a target that does not
    answer (3)."""


@dataclass(frozen=True)
class Audit:
    """What to audit and how: the target, which APIs, tokens and targets, the policy and the
    generation budget."""

    base_url: str
    targets: Targets = field(default_factory=Targets)
    apis: tuple[str, ...] = APIS
    token: str | None = None
    second_token: str | None = None
    policy: Policy = field(default_factory=Policy)
    seed: int = DEFAULT_SEED
    max_examples: int = DEFAULT_MAX_EXAMPLES
    fuzz: bool = True  # run Schemathesis after our scenarios
    phases: tuple[str, ...] = PHASES
    only: frozenset[str] | None = None  # run only these scenario checks (None: all)
    # waiting out throttling; --rate-limit
    throttle: ThrottleOptions = field(default_factory=ThrottleOptions)
    workers: int = (
        1  # scenario checks and Schemathesis shards run side by side; verdicts never depend on it
    )
    request_timeout: float = (
        DEFAULT_REQUEST_TIMEOUT  # seconds a whole answer is waited for; one without is a gap
    )
    # bytes of an answer's body read, on the wire and decoded; a longer one is a gap
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES

    @property
    def limits(self) -> AnswerLimits:
        """The most the audit reads of each answer."""
        return AnswerLimits(self.max_answer_bytes, self.request_timeout)

    @cached_property
    def redactor(self) -> Redactor:
        """One for the whole audit, so that a secret learned from one answer stays out of every
        output."""
        redactor = Redactor(
            self.token,
            self.second_token,
            self.targets.expired_token,
            self.targets.revoked_token,
            shown=MADE_UP_CREDENTIALS,
        )
        if self.targets.no_read_token:
            redactor.learn(self.targets.no_read_token)
        return redactor

    @cached_property
    def preflight_cuts(self) -> list[Gap]:
        """Every answer to a request of the pre-flight (preflight.py) that was not read whole, for
        the audit to name: the checks never see those answers."""
        return []

    @cached_property
    def cut_answers(self) -> CutAnswers:
        """One for the whole audit: every answer to a Schemathesis request cut at a limit, for the
        audit to name (fuzzing.cut_answer_gaps)."""
        return CutAnswers()


def plan_audit(
    base_url: str,
    *,
    targets: str | Path | None = None,
    token: str | None = None,
    second_token: str | None = None,
    apis: tuple[str, ...] = APIS,
    strict: bool = False,
    profile: str = DEFAULT_PROFILE,
    seed: int = DEFAULT_SEED,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    fuzz: bool = True,
    workers: int = 1,
    rate_limit: str | None = None,
    retries: int | None = None,
    max_wait: float | None = None,
    wait_budget: float | None = None,
    request_timeout: float | None = None,
    max_answer_bytes: int | None = None,
) -> Audit:
    """The audit that `evalmock contract`, the pytest plugin and `audit_url` run for the same
    options: the targets file read, and each token taken from the option, else the environment
    (EVALMOCK_TOKEN, EVALMOCK_SECOND_TOKEN), else the targets' [auth]."""
    _refuse_out_of_bounds(base_url, workers, request_timeout, max_answer_bytes)
    try:
        known = load_targets(targets) if targets else Targets()
        policy = Policy(strict=strict, profile=profile)
        throttle = _throttle_options(rate_limit, retries, max_wait, wait_budget)
    except (TargetsError, ThrottleError, ValueError) as exc:
        raise AuditError(str(exc)) from None
    return Audit(
        base_url=base_url.rstrip("/"),
        targets=known,
        apis=apis,
        token=token or environment.audit_token() or known.token or None,
        second_token=second_token or environment.second_token() or known.second_token or None,
        policy=policy,
        seed=seed,
        max_examples=max_examples,
        fuzz=fuzz,
        throttle=throttle,
        workers=workers,
        request_timeout=DEFAULT_REQUEST_TIMEOUT if request_timeout is None else request_timeout,
        max_answer_bytes=(
            DEFAULT_MAX_ANSWER_BYTES if max_answer_bytes is None else max_answer_bytes
        ),
    )


def _refuse_out_of_bounds(
    base_url: str, workers: int, request_timeout: float | None, max_answer_bytes: int | None
) -> None:
    """An AuditError naming the first option out of its bounds, if one is."""
    problem = base_url_problem(base_url)
    if problem:
        raise AuditError(problem)
    if workers < 1:
        raise AuditError(f"--workers must be 1 or more, got {workers}")
    if request_timeout is not None and not 0 < request_timeout <= MAX_SECONDS:
        raise AuditError(
            "--request-timeout must be more than 0 and at most "
            f"{counted(MAX_SECONDS, 'second', 'g')}, got {request_timeout:g}"
        )
    if max_answer_bytes is not None and max_answer_bytes < 1:
        raise AuditError(f"--max-answer-bytes must be 1 or more, got {max_answer_bytes}")


def _throttle_options(
    rate_limit: str | None, retries: int | None, max_wait: float | None, wait_budget: float | None
) -> ThrottleOptions:
    """How throttling is waited out: each option given, else its default (a bad rate raises
    ThrottleError)."""
    defaults = ThrottleOptions()
    return ThrottleOptions(
        retries=defaults.retries if retries is None else retries,
        max_wait=defaults.max_wait if max_wait is None else max_wait,
        budget=defaults.budget if wait_budget is None else wait_budget,
        rate=rate_limit,
    )
