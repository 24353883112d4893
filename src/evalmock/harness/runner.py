"""`evalmock contract`: resolve tokens and targets, check the target answers, audit, print and write results."""

from __future__ import annotations

import argparse
import os
import sys
from urllib.parse import urlsplit

import httpx

from evalmock.harness.audit import APIS, Audit, run_audit
from evalmock.harness.progress import LiveReporter, make_reporter
from evalmock.harness.redact import Redactor
from evalmock.harness.report import print_summary, report_format, write_junit, write_report
from evalmock.harness.targets import Targets, TargetsError, load_targets

EXIT_CONFORMS, EXIT_VIOLATIONS, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
REACHABILITY_TIMEOUT = 5.0  # seconds, for connecting and for the first answer


def resolve_tokens(args: argparse.Namespace, targets: Targets) -> tuple[str | None, str | None]:
    """--token, then env EVALMOCK_TOKEN, then the targets' [auth].token (the same order for the second)."""
    token = args.token or os.environ.get("EVALMOCK_TOKEN") or targets.token
    second = getattr(args, "second_token", None) or os.environ.get("EVALMOCK_SECOND_TOKEN") or targets.second_token
    return token or None, second or None


def check_base_url(base_url: str) -> str | None:
    """Why a base URL is unusable, or None when it is fine."""
    parts = urlsplit(base_url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return f"--base-url must be an http(s) URL such as http://127.0.0.1:8080, got {base_url!r}"
    if parts.query or parts.fragment:
        return "--base-url must not carry a query or fragment"
    return None


def reachable(base_url: str, timeout: float = REACHABILITY_TIMEOUT) -> str | None:
    """None when the target answers HTTP at all (any status), else why not."""
    try:
        httpx.get(base_url.rstrip("/") + "/", timeout=timeout)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return None


def run_contract(args: argparse.Namespace) -> int:
    def fail(message: str, code: int) -> int:
        print(f"evalmock contract: {redactor.text(message)}", file=sys.stderr)
        return code

    redactor = Redactor(args.token)
    try:
        targets = load_targets(args.targets) if args.targets else Targets()
    except TargetsError as exc:
        return fail(str(exc), EXIT_USAGE)
    token, second_token = resolve_tokens(args, targets)
    redactor = Redactor(token, second_token)
    problem = check_base_url(args.base_url)
    if problem:
        return fail(problem, EXIT_USAGE)
    if args.report and report_format(args.report) is None:
        return fail(f"--report must end in .md or .html, got {args.report!r}", EXIT_USAGE)
    base_url = args.base_url.rstrip("/")
    unreachable = reachable(base_url)
    if unreachable:
        return fail(f"{base_url} is unreachable ({unreachable})", EXIT_UNREACHABLE)
    if not token:
        print("evalmock contract: no token given (--token, EVALMOCK_TOKEN or [auth].token); checks that need "
              "one are skipped", file=sys.stderr)

    audit = Audit(
        base_url=base_url,
        targets=targets,
        apis=APIS if args.api == "all" else (args.api,),
        token=token,
        second_token=second_token,
        seed=args.seed,
        max_examples=args.max_examples,
        fuzz=not args.no_fuzz,
    )
    reporter = make_reporter(redactor, quiet=args.quiet)
    try:
        results = run_audit(audit, reporter)
    finally:
        if isinstance(reporter, LiveReporter):
            reporter.close()
    print_summary(results, redactor, sys.stdout)
    try:
        if args.junit:
            write_junit(results, args.junit, redactor)
        if args.report:
            write_report(results, args.report, base_url=base_url, redactor=redactor)
    except OSError as exc:
        return fail(f"cannot write the results: {exc}", EXIT_USAGE)
    return EXIT_CONFORMS if results.conforms else EXIT_VIOLATIONS
