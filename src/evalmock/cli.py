"""The command line: `evalmock serve | proxy | contract | rules | validate | fixtures`, wiring
only."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from evalmock import __version__, environment
from evalmock.admin_options import admin_options
from evalmock.arguments import (
    Parser,
    bearer_token,
    error_rate,
    latency_ms,
    port,
    positive,
    seconds,
    seed,
    workers,
    world_options,
)
from evalmock.audit_options import judging_options, pace_options, walk_options
from evalmock.defaults import (
    CHURN_RETIRE_EVERY,
    DEFAULT_HOST,
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_PORT,
    DEFAULT_PROXY_DEADLINE,
    DEFAULT_PROXY_JUDGE,
    DEFAULT_PROXY_PORT,
    DEFAULT_PROXY_TIMEOUT,
    DEFAULT_SEED,
    PROXY_JUDGES,
)
from evalmock.fixtures_options import fixtures_command
from evalmock.importing import long_lived
from evalmock.record_options import record_options
from evalmock.server.deferred_imports import defer_unused
from evalmock.server.http_server import SERVERS


def _server_option(command: argparse.ArgumentParser, default: str) -> None:
    command.add_argument(
        "--server",
        choices=SERVERS,
        default=None,
        help=f"the HTTP server: granian (Rust) or uvicorn (default {default})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="evalmock",
        description="Mock server and contract-test harness for agent-evaluation test-case APIs.",
    )
    parser.add_argument("--version", action="version", version=f"evalmock {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _serve_command(commands)
    _proxy_command(commands)
    _contract_command(commands)
    _rules_command(commands)
    _validate_command(commands)
    fixtures_command(commands)
    return parser


def _serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock serve`: the mock and its world."""
    serve = commands.add_parser("serve", help="serve both APIs from a seeded world")
    serve.add_argument(
        "--host", default=DEFAULT_HOST, help=f"interface to listen on (default {DEFAULT_HOST})"
    )
    serve.add_argument(
        "--port",
        type=port,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0: any free one, which the banner shows)",
    )
    world_options(serve)
    serve.add_argument("--workers", type=workers, default=1, help="server processes (default 1)")
    _server_option(serve, "granian where installed, else uvicorn")
    serve.add_argument(
        "--write-targets",
        metavar="PATH",
        help="write this world's demo tokens and known ids as a targets file for `evalmock "
        "contract`",
    )
    serve.add_argument(
        "--cursor-key",
        default=environment.read(environment.CURSOR_KEY),
        help="secret that seals cursors, shared by every process (default: env "
        f"{environment.CURSOR_KEY}, else derived from the seed)",
    )
    admin_options(serve)
    _answer_options(serve)
    _caller_and_data_options(serve)


def _answer_options(serve: argparse.ArgumentParser) -> None:
    """How the mock answers: added latency and errors, validation, its log, CORS."""
    serve.add_argument(
        "--latency",
        type=latency_ms,
        default=(0, 0),
        metavar="MS|MIN-MAX",
        help="added latency per request in milliseconds, fixed or a uniform range (default 0)",
    )
    serve.add_argument(
        "--error-rate",
        type=error_rate,
        default=0.0,
        metavar="RATE",
        help="fraction of requests answered with the API's transient error (default 0)",
    )
    serve.add_argument(
        "--validate-responses",
        action="store_true",
        help="validate every response against the document",
    )
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.add_argument("--no-cors", action="store_true", help="do not answer CORS requests")


def _caller_and_data_options(serve: argparse.ArgumentParser) -> None:
    """Whom the mock accepts, which query parameters, and the data it serves besides its world."""
    serve.add_argument(
        "--token",
        action="append",
        type=bearer_token,
        metavar="NAME[:user|service]",
        help="accept this bearer token too, as a user (default) or a service; repeatable (also env "
        f"{environment.ACCEPT_TOKENS}, whitespace-separated, which keeps the tokens out of the "
        "process list)",
    )
    serve.add_argument(
        "--any-token",
        action="store_true",
        help="accept any non-empty bearer token, spaces included, as a user of its own, as Prism "
        "does (default: only demo and --token tokens)",
    )
    serve.add_argument(
        "--allow-unknown-params",
        action="store_true",
        help="ignore query parameters the document does not declare (default: 400 bad-input "
        "naming them)",
    )
    serve.add_argument(
        "--data",
        action="append",
        dest="data_files",
        metavar="FILE",
        help="also serve your agents, projects, cases and test cases from this JSON or YAML file "
        "(repeatable); "
        "checked at start and reloaded when it changes",
    )
    serve.add_argument(
        "--data-only", action="store_true", help="serve only the --data files, nothing generated"
    )
    serve.add_argument(
        "--churn",
        type=positive,
        metavar="N",
        help="lists move: a new case arrives at the top of a list every N requests of it, and one "
        f"arrival in {CHURN_RETIRE_EVERY} retires one of its newest active cases; deterministic "
        "per seed (default: lists stand still; one worker only)",
    )


def _proxy_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock proxy`: forwarding to a live service, judging what it answers."""
    proxy = commands.add_parser(
        "proxy",
        help="forward to a live service and judge every response it sends against the contract",
    )
    proxy.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the service's root URL, e.g. https://staging.example.com",
    )
    proxy.add_argument(
        "--host", default=DEFAULT_HOST, help=f"interface to listen on (default {DEFAULT_HOST})"
    )
    proxy.add_argument(
        "--port",
        type=port,
        default=DEFAULT_PROXY_PORT,
        help=f"port (default {DEFAULT_PROXY_PORT}; 0: any free one, which the banner shows)",
    )
    judging_options(
        proxy, "which API's responses to judge (default all; the other's are forwarded unjudged)"
    )
    proxy.add_argument(
        "--timeout",
        type=seconds,
        default=DEFAULT_PROXY_TIMEOUT,
        metavar="SECONDS",
        help=f"longest wait for the upstream's answer, and between two pieces of it; then 504 "
        f"(default {DEFAULT_PROXY_TIMEOUT:g})",
    )
    proxy.add_argument(
        "--deadline",
        type=seconds,
        default=DEFAULT_PROXY_DEADLINE,
        metavar="SECONDS",
        help="longest an answer to be judged may take in all, from the request to its last byte; "
        f"then 504 (default {DEFAULT_PROXY_DEADLINE:g})",
    )
    proxy.add_argument(
        "--judge",
        choices=PROXY_JUDGES,
        default=DEFAULT_PROXY_JUDGE,
        help="whose side to judge: the service's answers, the app's requests (the client rules), "
        "or both; the exit code is the verdict on what is judged (default "
        f"{DEFAULT_PROXY_JUDGE})",
    )
    proxy.add_argument("--har", metavar="PATH", help="record the traffic as a HAR 1.2 file")
    record_options(proxy)
    walk_options(proxy, "the traffic")
    _server_option(proxy, "uvicorn, which adds no header of its own")


def _contract_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock contract`: an audit of a running service or of recorded traffic."""
    contract = commands.add_parser("contract", help="audit an implementation against the contract")
    contract.add_argument(
        "--base-url",
        help="the implementation's root URL, e.g. http://127.0.0.1:8080 (default: the --targets "
        "file's base_url; with --har: only entries of that service)",
    )
    contract.add_argument(
        "--har",
        metavar="FILE",
        help="audit recorded traffic (a HAR 1.2 file) instead of a running service: every "
        "response judged offline",
    )
    judging_options(contract, "which API to audit (default all)")
    walk_options(contract, "a --har file")
    contract.add_argument(
        "--token",
        default=None,
        help=f"bearer token (default: env {environment.TOKEN}, else the targets file); never "
        "printed",
    )
    contract.add_argument(
        "--second-token",
        default=None,
        help="a second caller's token, for cursor-binding checks (default: env "
        f"{environment.SECOND_TOKEN}, else the "
        "targets file); never printed",
    )
    contract.add_argument(
        "--max-examples",
        type=positive,
        default=DEFAULT_MAX_EXAMPLES,
        help=f"examples per Schemathesis phase (default {DEFAULT_MAX_EXAMPLES})",
    )
    contract.add_argument(
        "--seed", type=seed, default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})"
    )
    contract.add_argument(
        "--no-fuzz", action="store_true", help="run only our semantic checks, not Schemathesis"
    )
    contract.add_argument("--quiet", action="store_true", help="no live progress, only the summary")
    contract.add_argument(
        "--workers",
        type=workers,
        default=1,
        help="requests in flight at once: scenario checks and Schemathesis shards side by side; "
        "the verdict and "
        "findings are the same for any number (default 1)",
    )
    pace_options(contract)


def _rules_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock rules`: the rules, or the pages line by line."""
    rules = commands.add_parser(
        "rules", help="list every rule the audit applies, with its level and source"
    )
    rules.add_argument(
        "--coverage",
        metavar="PAGES_DIR",
        help="instead, walk the two reference pages (the folder holding them) line by line: what "
        "enforces each",
    )


def _validate_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock validate`: the documents and their lint."""
    validate = commands.add_parser("validate", help="validate OpenAPI documents and lint them")
    validate.add_argument(
        "paths", nargs="*", metavar="PATH", help="documents (default: every one under openapi/)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve" and args.data_only and not args.data_files:
        parser.error("--data-only serves only the --data files: name at least one")
    if args.command == "serve" and args.churn and args.workers > 1:
        parser.error(
            "--churn moves each list by the requests one process counts: with --workers "
            f"{args.workers} each worker's lists would move apart, and a cursor one issued would "
            "fail on another; serve with --workers 1"
        )
    with long_lived():
        run = command(args.command)
    return run(args)


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The command's function, imported only now: each command loads only its own dependencies."""
    if name == "serve":
        defer_unused()  # a server process: before Connexion is imported
        from evalmock.server.runner import serve

        return serve
    if name == "proxy":
        from evalmock.proxy.command import run_proxy

        return run_proxy
    if name == "contract":
        from evalmock.harness.contract_command import run_contract

        return run_contract
    if name == "rules":
        from evalmock.harness.report.rule_tables import print_rules

        return lambda args: print_rules(args.coverage)
    if name == "validate":
        from evalmock.contract.validate import run_validate

        return lambda args: run_validate(args.paths)
    if name == "fixtures":
        from evalmock.world.export import run_fixtures

        return lambda args: (
            _run_import(args) if args.fixtures_command == "import" else run_fixtures(args)
        )
    raise AssertionError(name)  # argparse rejects unknown commands


def _run_import(args: argparse.Namespace) -> int:
    """`evalmock fixtures import`, imported only now, as each command is."""
    from evalmock.recording.har_import import run_import

    return run_import(args)


if __name__ == "__main__":
    sys.exit(main())
