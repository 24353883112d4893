"""The command line's options for judging: what `contract` and `proxy` judge by and the walk state
they keep, and the pace of an audit; with the harness's defaults they state."""

from __future__ import annotations

import argparse

from evalmock.arguments import positive, retries, seconds
from evalmock.defaults import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_WAIT,
    DEFAULT_MAX_WALKS,
    DEFAULT_PROFILE,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    LIVE_PROFILE,
    PROFILES,
)

# contract.documents.APIS's names (a test keeps them equal): importing it here would slow every
# command's start.
API_CHOICES = ["test-set", "gradient", "all"]


def judging_options(command: argparse.ArgumentParser, api_help: str) -> None:
    """What `evalmock contract` and `evalmock proxy` both judge by: which API, the targets, the
    policy, the outputs."""
    command.add_argument("--api", choices=API_CHOICES, default="all", help=api_help)
    command.add_argument(
        "--targets", metavar="FILE", help="TOML or YAML file of known ids and facts"
    )
    command.add_argument(
        "--strict",
        action="store_true",
        help="fail on inferred rules too (default: they are warnings)",
    )
    command.add_argument(
        "--profile",
        choices=PROFILES,
        default=DEFAULT_PROFILE,
        help=f"{LIVE_PROFILE} adds the facts of DigitalOcean's live service (default "
        f"{DEFAULT_PROFILE}: the pages)",
    )
    command.add_argument("--junit", metavar="PATH", help="write JUnit XML here")
    command.add_argument(
        "--report", metavar="PATH", help="write a conformance report here (.md or .html)"
    )


def walk_options(command: argparse.ArgumentParser, which: str) -> None:
    """How much walk state traffic keeps: open walks and their pages, least recently used let go
    first."""
    command.add_argument(
        "--max-walks",
        type=positive,
        default=DEFAULT_MAX_WALKS,
        metavar="N",
        help=f"open walks followed in {which} at once (default {DEFAULT_MAX_WALKS})",
    )
    command.add_argument(
        "--max-walk-pages",
        type=positive,
        default=DEFAULT_MAX_PAGES,
        metavar="N",
        help=f"pages held over all open walks (default {DEFAULT_MAX_PAGES})",
    )


def pace_options(contract: argparse.ArgumentParser) -> None:
    """How fast an audit goes: its rate, its waits for throttled answers, each request's timeout."""
    contract.add_argument(
        "--rate-limit",
        metavar="N/s",
        default=None,
        help="keep every request of the audit under this rate, as N/s, N/m or N/h (Schemathesis's "
        "syntax; "
        "default: no limit)",
    )
    contract.add_argument(
        "--throttle-retries",
        type=retries,
        default=None,
        metavar="N",
        help="tries again per request after a 429 or a 503 with Retry-After (default "
        f"{DEFAULT_RETRIES})",
    )
    contract.add_argument(
        "--throttle-max-wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"the longest Retry-After waited out (default {DEFAULT_MAX_WAIT:g})",
    )
    contract.add_argument(
        "--throttle-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time one audit may spend waiting out throttled answers; waits of parallel workers "
        "that overlap "
        f"count once (default {DEFAULT_BUDGET:g})",
    )
    contract.add_argument(
        "--request-timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="how long to wait for each answer; a request without one is judged by no check and "
        "leaves the audit "
        f"INCOMPLETE (default {DEFAULT_REQUEST_TIMEOUT:g})",
    )
    contract.add_argument(
        "--max-answer-bytes",
        type=positive,
        default=None,
        metavar="N",
        help="the most bytes of one answer's body read, on the wire and decompressed; a longer "
        "answer is judged by no check and leaves the audit INCOMPLETE (default "
        f"{DEFAULT_MAX_ANSWER_BYTES}, 16 MiB)",
    )
