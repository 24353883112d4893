"""`evalmock proxy --upstream URL`: check the options, build the proxy, serve it until Ctrl-C
(SIGINT or SIGTERM), then print the summary and write the outputs; SIGUSR1 writes them while it
runs."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from evalmock.contract.base_url import base_url_problem as check_base_url
from evalmock.contract.documents import APIS
from evalmock.contract.operations import operation
from evalmock.contract.targets import TargetsError, load_targets
from evalmock.exits import USAGE as EXIT_USAGE
from evalmock.exits import UsageError
from evalmock.harness.checks.policy import Policy
from evalmock.harness.report import client_section
from evalmock.harness.report.files import report_format
from evalmock.harness.report.output_paths import outputs_problem
from evalmock.harness.report.run_info import RunInfo
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.report.view import policy_line
from evalmock.harness.traffic.audit import TrafficAudit, traffic_redactor
from evalmock.harness.traffic.walks import WalkBounds
from evalmock.proxy.cors import ProxyCORSMiddleware
from evalmock.proxy.forwarding import ProxyApp
from evalmock.proxy.session import Outputs, ProxySession
from evalmock.proxy.tls import CertificatesUnreadable
from evalmock.proxy.violations import HEADER
from evalmock.server.banner import public_url
from evalmock.server.http_server import (
    GRACEFUL_SHUTDOWN_S,
    GRANIAN,
    CannotListen,
    ServeOptions,
    ServerUnavailable,
    check_available,
    check_can_listen,
    run_in_loop,
    serve_granian,
)
from evalmock.server.one_write import HTTP_PROTOCOL
from evalmock.server.runner import freeze_startup_objects

# The collector's thresholds while the proxy serves (Python's: 700, 10, 10). Judging a page parses
# it into about a thousand containers, none of them in a cycle, and what the judge remembers (pages'
# values, walk state) is long-lived: at the defaults each page set off several collections and every
# few pages a full one walked all of it. Collected this much less often, the proxy spent 9% less CPU
# on pages it had not seen and the p99 it added fell by half, side by side
# (docs/maintainers/performance.md, "The garbage collector"); cycles are still collected, later.
COLLECTOR_THRESHOLDS = (50_000, 20, 100)
# uvicorn adds no Server or Date header where the upstream sent none; Granian adds its own there
# (and only there).
DEFAULT_PROXY_SERVER = "uvicorn"
# The upstream's own Server and Date headers pass through, uvicorn adds none of its own;
# X-Forwarded-* headers are forwarded, not taken as the proxy's own client address.
UVICORN_OPTIONS: dict[str, Any] = {
    "server_header": False,
    "date_header": False,
    "proxy_headers": False,
    "http": HTTP_PROTOCOL,
}


# uvicorn's lines for an answer the proxy ends before its last byte: the upstream cut it short, or
# the proxy stopped (Ctrl-C) with it still streaming. The proxy counts each with why in its summary.
UVICORN_QUIETED = (
    "ASGI callable returned without completing response.",
    "Cancel %s running task(s), timeout graceful shutdown exceeded",
)


def _not_quieted(record: logging.LogRecord) -> bool:
    return record.msg not in UVICORN_QUIETED


def build_proxy(args: argparse.Namespace, stream: Any = None) -> tuple[Any, ProxyApp, ProxySession]:
    """The ASGI app to serve (CORS around the forwarder), the forwarder and its session; UsageError
    on bad options."""
    upstream = args.upstream.rstrip("/")
    problem = check_base_url(args.upstream)  # as given: `http://` is not shown as `http:`
    if problem:
        raise UsageError(problem.replace("the base URL", "--upstream"))
    if args.report and report_format(args.report) is None:
        raise UsageError(f"--report must end in .md or .html, got {args.report!r}")
    record = getattr(args, "record", None)
    if getattr(args, "anonymize", False) and not record:
        raise UsageError("--anonymize makes up the people of the --record file: name one")
    unwritable = outputs_problem(
        {"--report": args.report, "--junit": args.junit, "--har": args.har, "--record": record}
    )
    if unwritable:
        raise UsageError(unwritable)
    try:
        targets = load_targets(args.targets) if args.targets else None
        policy = Policy(strict=args.strict, profile=args.profile)
    except (TargetsError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    apis = tuple(APIS) if args.api == "all" else (args.api,)
    audit = TrafficAudit(
        policy,
        apis=apis,
        targets=targets,
        redactor=traffic_redactor(targets),
        walk_bounds=WalkBounds(args.max_walks, args.max_walk_pages),
    )
    session = ProxySession(
        audit,
        upstream,
        Outputs(
            args.report,
            args.junit,
            args.har,
            record,
            args.seed if getattr(args, "anonymize", False) else None,
        ),
        stream,
        RunInfo.of(upstream, target_kind="upstream", targets=args.targets),
        judge=args.judge,
    )
    try:
        forwarder = ProxyApp(upstream, session, timeout=args.timeout, deadline=args.deadline)
    except CertificatesUnreadable as exc:
        raise UsageError(str(exc)) from None
    return ProxyCORSMiddleware(forwarder), forwarder, session


def banner(args: argparse.Namespace, session: ProxySession) -> str:
    apis = ", ".join(f"{api} ({operation(api).label})" for api in session.audit.results.apis)
    lines = [
        f"evalmock proxy: {public_url(args.host, args.port)} -> {session.upstream} (timeout "
        f"{args.timeout:g} s)",
        f"  judging {apis}; {policy_line(session.audit.results)}",
    ]
    if session.judges_service:
        lines.append(f"  each broken rule: a line here, and the {HEADER} header on its response")
    else:
        lines.append("  the service's answers: not judged (--judge client)")
    lines.append(
        "  the app's requests: judged by the client rules (`evalmock rules`) in the summary"
        if session.judges_client
        else "  the app's requests: not judged (--judge service)"
    )
    if session.outputs.paths:
        lines.append(
            f"  {', '.join(session.outputs.paths)}: written on Ctrl-C, and on `kill -USR1 <pid>`"
        )
    return session.redactor.text("\n".join(lines))  # an upstream URL may carry a key or a password


def run_proxy(args: argparse.Namespace) -> int:
    """Serve until stopped; the exit code is the verdict on the traffic seen (0, 1 or 4), or 2 for
    bad options."""
    try:
        app, forwarder, session = build_proxy(args)
        server_name = getattr(args, "server", None) or DEFAULT_PROXY_SERVER
        check_available(server_name)
        # port 0: the one chosen, for the banner and the server
        args.port = check_can_listen(args.host, args.port)
    except (UsageError, ServerUnavailable, CannotListen) as exc:
        print(f"evalmock proxy: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if server_name == GRANIAN:
        return _run_granian(args, app, forwarder, session)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        **UVICORN_OPTIONS,
    )
    config.load()  # uvicorn's protocol modules, imported now so that they are frozen too
    logging.getLogger("uvicorn.error").addFilter(_not_quieted)
    # the judges' documents and schemas out of the collector's way, and its pace
    collect_less_often()
    server = uvicorn.Server(config)
    print(banner(args, session), flush=True)
    # uvicorn stops on SIGINT and SIGTERM, then raises the signal again: both end here as
    # KeyboardInterrupt.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        # uvloop where installed, as uvicorn itself picks it
        run_in_loop(lambda: _serve(server, session))
    except KeyboardInterrupt:
        pass
    except SystemExit:  # uvicorn could not listen; it has said why
        if not server.started:
            return EXIT_USAGE
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    return _finish(session)


def collect_less_often() -> None:
    """Freeze what the start built (as `evalmock serve` does) and collect at COLLECTOR_THRESHOLDS
    from now on."""
    freeze_startup_objects()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


def _run_granian(
    args: argparse.Namespace, app: Any, forwarder: ProxyApp, session: ProxySession
) -> int:
    collect_less_often()
    print(banner(args, session), flush=True)

    async def main() -> int:
        with _outputs_on_demand(session):
            # Granian waits for every open answer, and one that never ends would hold it forever:
            # those still streaming are ended at once.
            options = ServeOptions(args.host, args.port)
            return await serve_granian(app, options, stopping=forwarder.end_streams)

    if run_in_loop(main) != 0:  # it could not listen, and has said why
        session.close()
        return EXIT_USAGE
    return _finish(session)


def _finish(session: ProxySession) -> int:
    results = session.write_outputs()
    session.close()
    if session.judges_service:
        print_summary(results, session.redactor, sys.stdout)
    client = session.client_verdict()
    if client is not None:
        client_section.print_summary(client, session.redactor, sys.stdout)
    if session.data is not None:
        print(session.data.summary(), flush=True)
    return session.exit_code(results, client)


@contextmanager
def _outputs_on_demand(session: ProxySession) -> Iterator[None]:
    """SIGUSR1 writes the outputs, between two requests, never in the middle of judging one."""
    loop = asyncio.get_running_loop()
    on_demand = getattr(signal, "SIGUSR1", None)  # not on Windows
    if on_demand is not None:
        loop.add_signal_handler(on_demand, lambda: session.write_outputs(behind=True))
    try:
        yield
    finally:
        if on_demand is not None:
            loop.remove_signal_handler(on_demand)


async def _serve(server: uvicorn.Server, session: ProxySession) -> int:
    """Serve (the forwarder closes its connections in the lifespan's shutdown), writing the outputs
    on SIGUSR1."""
    with _outputs_on_demand(session):
        await server.serve()
    return 0
