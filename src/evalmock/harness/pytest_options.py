"""The pytest plugin's command-line options (`--evalmock-...`), and the audit they plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from evalmock import environment
from evalmock.defaults import DEFAULT_MAX_EXAMPLES, DEFAULT_SEED
from evalmock.option_numbers import positive, retries, seed, workers

if TYPE_CHECKING:  # the audit's imports are heavy; they load only when an audit is asked for
    from evalmock.harness.run.options import Audit


def add_options(parser: pytest.Parser) -> None:
    """Every option, in the group `evalmock` of pytest's help: what to audit, then how its
    requests are sent."""
    group = parser.getgroup("evalmock", "evalmock contract audit")
    _what_to_audit(group)
    _how_to_send(group)


def _what_to_audit(group: pytest.OptionGroup) -> None:
    """The target, its API and credentials, and what the audit checks."""
    group.addoption("--evalmock-base-url", help="audit the implementation at this root URL")
    group.addoption(
        "--evalmock-targets",
        help="targets file (TOML or YAML) of known ids, facts and [auth] tokens",
    )
    group.addoption(
        "--evalmock-api",
        choices=["test-set", "gradient", "all"],
        default="all",
        help="which API (default all)",
    )
    group.addoption(
        "--evalmock-token",
        help=f"bearer token (default: env {environment.TOKEN}, else the targets)",
    )
    group.addoption(
        "--evalmock-second-token",
        help=f"a second caller's token (default: env {environment.SECOND_TOKEN})",
    )
    group.addoption(
        "--evalmock-max-examples",
        type=positive,
        default=DEFAULT_MAX_EXAMPLES,
        help="examples per Schemathesis phase",
    )
    group.addoption("--evalmock-seed", type=seed, default=DEFAULT_SEED, help="generation seed")
    group.addoption(
        "--evalmock-no-fuzz", action="store_true", help="semantic checks only, no Schemathesis"
    )
    group.addoption("--evalmock-strict", action="store_true", help="fail on inferred rules too")
    group.addoption(
        "--evalmock-profile", default="pages", help="pages (default) or digitalocean-live"
    )


def _how_to_send(group: pytest.OptionGroup) -> None:
    """How the audit's requests are sent: side by side, how fast, how long each is waited for."""
    group.addoption(
        "--evalmock-workers",
        type=workers,
        default=1,
        help="Schemathesis shards run side by side; the verdict and findings are the same "
        "(default 1)",
    )
    group.addoption(
        "--evalmock-rate-limit",
        metavar="N/s",
        help="keep every request of the audit under this rate: N/s, N/m or N/h (default: no limit)",
    )
    group.addoption(
        "--evalmock-throttle-retries",
        type=retries,
        metavar="N",
        help="tries again per request after a 429 or a 503 with Retry-After (default 3)",
    )
    group.addoption(
        "--evalmock-throttle-max-wait",
        type=float,
        metavar="SECONDS",
        help="the longest Retry-After waited out (default 30)",
    )
    group.addoption(
        "--evalmock-throttle-budget",
        type=float,
        metavar="SECONDS",
        help="time the session may spend waiting out throttled answers; waits of parallel shards "
        "that "
        "overlap count once (default 120)",
    )
    group.addoption(
        "--evalmock-request-timeout",
        type=float,
        metavar="SECONDS",
        help="how long to wait for each answer; one without leaves the audit incomplete (default "
        "15)",
    )
    group.addoption(
        "--evalmock-max-answer-bytes",
        type=positive,
        metavar="N",
        help="the most bytes of one answer's body read, on the wire and decompressed; a longer "
        "one leaves the audit incomplete (default 16777216, 16 MiB)",
    )


def audit_from_options(config: pytest.Config) -> Audit | None:
    base_url = config.getoption("--evalmock-base-url")
    if not base_url:
        return None
    from evalmock.harness.run.options import APIS, AuditError, plan_audit

    api = config.getoption("--evalmock-api")
    try:
        return plan_audit(
            base_url,
            targets=config.getoption("--evalmock-targets"),
            token=config.getoption("--evalmock-token"),
            second_token=config.getoption("--evalmock-second-token"),
            apis=APIS if api == "all" else (api,),
            strict=config.getoption("--evalmock-strict"),
            profile=config.getoption("--evalmock-profile"),
            seed=config.getoption("--evalmock-seed"),
            max_examples=config.getoption("--evalmock-max-examples"),
            fuzz=not config.getoption("--evalmock-no-fuzz"),
            workers=config.getoption("--evalmock-workers"),
            rate_limit=config.getoption("--evalmock-rate-limit"),
            retries=config.getoption("--evalmock-throttle-retries"),
            max_wait=config.getoption("--evalmock-throttle-max-wait"),
            wait_budget=config.getoption("--evalmock-throttle-budget"),
            request_timeout=config.getoption("--evalmock-request-timeout"),
            max_answer_bytes=config.getoption("--evalmock-max-answer-bytes"),
        )
    except AuditError as exc:
        message = (
            str(exc)
            .replace("the base URL", "--evalmock-base-url")
            .replace("--workers", "--evalmock-workers")
        )
        message = message.replace("--request-timeout", "--evalmock-request-timeout")
        message = message.replace("--max-answer-bytes", "--evalmock-max-answer-bytes")
        raise pytest.UsageError(message) from None
