"""`evalmock contract`: plan the audit from the options, check the target answers, audit, print and write results."""

from __future__ import annotations

import argparse
import sys

from evalmock.harness.audit import APIS, EXIT_UNREACHABLE, EXIT_USAGE, AuditError, plan_audit, reachable, run_audit
from evalmock.harness.progress import LiveReporter, make_reporter
from evalmock.harness.redact import Redactor
from evalmock.harness.report import print_summary, report_format, write_junit, write_report


def run_contract(args: argparse.Namespace) -> int:
    """The exit code is the verdict (0 conforms, 1 violations, 4 incomplete), else 2 (usage) or 3 (unreachable)."""
    redactor = Redactor(args.token, args.second_token)

    def fail(message: str, code: int) -> int:
        print(f"evalmock contract: {redactor.text(message)}", file=sys.stderr)
        return code

    try:
        audit = plan_audit(
            args.base_url, targets=args.targets, token=args.token, second_token=args.second_token,
            apis=APIS if args.api == "all" else (args.api,), strict=args.strict, profile=args.profile,
            seed=args.seed, max_examples=args.max_examples, fuzz=not args.no_fuzz,
        )
    except AuditError as exc:
        return fail(str(exc).replace("the base URL", "--base-url"), exc.exit_code)
    redactor = audit.redactor
    if args.report and report_format(args.report) is None:
        return fail(f"--report must end in .md or .html, got {args.report!r}", EXIT_USAGE)
    unreachable = reachable(audit.base_url)
    if unreachable:
        return fail(f"{audit.base_url} is unreachable ({unreachable})", EXIT_UNREACHABLE)
    if not audit.token:
        print("evalmock contract: no token given (--token, EVALMOCK_TOKEN or [auth].token); checks that need "
              "one are skipped, and an audit that checks no page rule ends INCOMPLETE", file=sys.stderr)
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
            write_report(results, args.report, base_url=audit.base_url, redactor=redactor)
    except OSError as exc:
        return fail(f"cannot write the results: {exc}", EXIT_USAGE)
    return results.verdict.exit_code
