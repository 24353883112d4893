"""`evalmock contract`: plan the audit from the options, check the target answers, audit, print and
write results; with `--har FILE`, judge recorded traffic instead, with the same outputs and exit
codes."""

from __future__ import annotations

import argparse
import contextlib
import sys

from evalmock import environment
from evalmock.contract.base_url import base_url_problem as check_base_url
from evalmock.contract.targets import TargetsError, load_targets
from evalmock.crash import crash_line
from evalmock.exits import USAGE as EXIT_USAGE
from evalmock.harness.checks.policy import Policy
from evalmock.harness.excerpts import printable
from evalmock.harness.report.files import report_format, write_report, write_unfinished_report
from evalmock.harness.report.junit import (
    write_junit,
    write_junit_not_run,
    write_junit_unfinished,
)
from evalmock.harness.report.output_paths import outputs_problem
from evalmock.harness.report.progress import (
    LiveReporter,
    Pace,
    expected_answers,
    make_reporter,
)
from evalmock.harness.report.run_info import RunInfo
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.report.view import replay_notes
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import APIS, Audit, AuditError, plan_audit
from evalmock.harness.run.preflight import check_target
from evalmock.harness.run.schemathesis_schema import place_hypothesis_files
from evalmock.harness.secrets.redactor import Redactor
from evalmock.harness.traffic.audit import TrafficAudit, traffic_redactor
from evalmock.harness.traffic.har import HarError, audit_har
from evalmock.harness.traffic.walks import WalkBounds


def run_contract(args: argparse.Namespace) -> int:
    """The exit code is the verdict (0 conforms, 1 violations, 4 incomplete), else 2 (usage) or 3
    (unreachable)."""
    redactor = Redactor(args.token, args.second_token)
    if args.report and report_format(args.report) is None:
        return _fail(
            redactor, f"--report must end in .md or .html, got {args.report!r}", EXIT_USAGE
        )
    unwritable = outputs_problem({"--report": args.report, "--junit": args.junit})
    if unwritable:
        return _fail(redactor, unwritable, EXIT_USAGE)
    try:
        return _audit(args, redactor)
    except Exception as exc:
        _say_unfinished(args, crash_line(exc), redactor)
        raise  # the entry point prints the crash line and exits CRASHED


def _audit(args: argparse.Namespace, redactor: Redactor) -> int:
    """The live or recorded audit the options ask for, with its outputs."""
    if args.har:
        return run_har_audit(args, redactor)
    if not args.base_url and args.targets:  # `evalmock serve --write-targets` names its URL
        try:
            args.base_url = load_targets(args.targets).base_url
        except TargetsError as exc:
            return _fail(redactor, str(exc), EXIT_USAGE)
    if not args.base_url:
        return _fail(
            redactor,
            "--base-url is required (or a --targets file with base_url, or --har FILE, to audit "
            "recorded traffic)",
            EXIT_USAGE,
        )
    try:
        audit = _plan(args)
        redactor = audit.redactor
        check_target(audit)  # exit 3: the target does not answer, or answers no audited API
    except AuditError as exc:
        return _not_started(args, exc, redactor)
    return _run_live(args, audit)


def _say_unfinished(args: argparse.Namespace, crash: str, redactor: Redactor) -> None:
    """Each output asked for says that the audit did not finish: a file an earlier run left there,
    or this run's half-written one, would read as a verdict. A file that cannot be written is left
    (the crash is what the user must see)."""
    for path, write in (
        (args.junit, write_junit_unfinished),
        (args.report, write_unfinished_report),
    ):
        if path:
            with contextlib.suppress(OSError):
                write(crash, path, redactor)


def _fail(redactor: Redactor, message: str, code: int) -> int:
    # the message may quote the service (why it is unreachable, what it answered)
    print(f"evalmock contract: {printable(redactor.text(message))}", file=sys.stderr)
    return code


def _plan(args: argparse.Namespace) -> Audit:
    """The live audit the options ask for; AuditError says what is wrong with them."""
    return plan_audit(
        args.base_url,
        targets=args.targets,
        token=args.token,
        second_token=args.second_token,
        apis=APIS if args.api == "all" else (args.api,),
        strict=args.strict,
        profile=args.profile,
        seed=args.seed,
        max_examples=args.max_examples,
        fuzz=not args.no_fuzz,
        workers=args.workers,
        rate_limit=args.rate_limit,
        retries=args.throttle_retries,
        max_wait=args.throttle_max_wait,
        wait_budget=args.throttle_budget,
        request_timeout=args.request_timeout,
        max_answer_bytes=args.max_answer_bytes,
    )


def _not_started(args: argparse.Namespace, exc: AuditError, redactor: Redactor) -> int:
    """The audit could not start: said, and in the JUnit file asked for; no report is written."""
    message = str(exc).replace("the base URL", "--base-url")
    if args.junit:  # the options are good: a CI's test report says why the audit did not run
        write_junit_not_run(f"evalmock contract: {message}", exc.exit_code, args.junit, redactor)
    if args.report:  # a report of no audit would look like one of an audit that found nothing
        print(
            f"evalmock contract: no report written to {args.report}: the audit did not start",
            file=sys.stderr,
        )
    return _fail(redactor, message, exc.exit_code)


def _run_live(args: argparse.Namespace, audit: Audit) -> int:
    """Audit the live target, with progress shown as asked, then print and write the results."""
    redactor = audit.redactor
    if not audit.token:
        print(
            f"evalmock contract: no token given (--token, {environment.TOKEN} or [auth].token); "
            "checks that need one are skipped, and an audit that checks no page rule ends "
            "INCOMPLETE",
            file=sys.stderr,
        )
    run = RunInfo.of(
        audit.base_url,
        targets=args.targets,
        seed=audit.seed,
        max_examples=audit.max_examples,
        fuzz=audit.fuzz,
    )
    pace = Pace(audit.workers, expected_answers(audit.apis, fuzz=audit.fuzz))
    reporter = make_reporter(redactor, quiet=args.quiet, pace=pace)
    place_hypothesis_files()  # only the live audit runs Hypothesis
    try:
        results = run_audit(audit, reporter)
    finally:
        if isinstance(reporter, LiveReporter):
            reporter.close()
    return finish(args, results, run, redactor)


def run_har_audit(args: argparse.Namespace, redactor: Redactor) -> int:
    """`--har FILE`: every entry of an audited API's operation judged; with --base-url, only that
    service's."""
    if args.base_url and (problem := check_base_url(args.base_url)):
        print(
            f"evalmock contract: {problem.replace('the base URL', '--base-url')}", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        targets = load_targets(args.targets) if args.targets else None
        redactor = traffic_redactor(targets, args.token, args.second_token)
        audit = TrafficAudit(
            Policy(strict=args.strict, profile=args.profile),
            apis=APIS if args.api == "all" else (args.api,),
            targets=targets,
            redactor=redactor,
            walk_bounds=WalkBounds(args.max_walks, args.max_walk_pages),
        )
        audit_har(args.har, audit, args.base_url, max_body=args.max_answer_bytes)
    except (TargetsError, HarError) as exc:
        print(f"evalmock contract: {printable(redactor.text(str(exc)))}", file=sys.stderr)
        return EXIT_USAGE
    return finish(
        args,
        audit.snapshot(),
        RunInfo.of(args.har, target_kind="HAR file", targets=args.targets),
        redactor,
    )


def finish(args: argparse.Namespace, results: Results, run: RunInfo, redactor: Redactor) -> int:
    """Print the summary, write the JUnit and report files asked for; the exit code is the
    verdict's."""
    results.notes += replay_notes(results, redactor)
    print_summary(results, redactor, sys.stdout)
    try:
        if args.junit:
            write_junit(results, args.junit, redactor)
        if args.report:
            write_report(results, args.report, base_url=run.target, redactor=redactor, run=run)
    except OSError as exc:
        print(
            f"evalmock contract: cannot write the results: {redactor.text(str(exc))}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if written := [path for path in (args.junit, args.report) if path]:
        print(f"evalmock contract: wrote {', '.join(written)}", file=sys.stderr)
    return results.verdict.exit_code
