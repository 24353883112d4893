"""The command line: `evalmock serve | proxy | contract | rules | validate | fixtures`, wiring only."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evalmock import environment
from evalmock.defaults import (
    ACCEPT_TOKENS_ENV,
    DEFAULT_BUDGET,
    DEFAULT_HOST,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_WAIT,
    DEFAULT_MAX_WALKS,
    DEFAULT_PORT,
    DEFAULT_PROFILE,
    DEFAULT_PROXY_PORT,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    LIVE_PROFILE,
    MAX_SECONDS,
    PROFILES,
)
from evalmock.importing import long_lived
from evalmock.server.deferred_imports import defer_unused
from evalmock.server.http_server import SERVERS

DEFAULT_PROXY_TIMEOUT = 30.0  # seconds
# contract.documents.APIS's names (a test keeps them equal): importing it here would slow every command's start.
API_CHOICES = ["test-set", "gradient", "all"]
DEFAULT_SEED = 42
DEFAULT_CASES = 1000


def _latency(text: str) -> tuple[int, int]:
    """`200` or `50-400` (milliseconds) -> (low, high)."""
    try:
        low, _, high = text.partition("-")
        bounds = (int(low), int(high or low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MS or MIN-MAX in milliseconds, got {text!r}") from None
    if bounds[0] < 0 or bounds[1] < bounds[0] or bounds[1] > 60_000:
        raise argparse.ArgumentTypeError("latency must satisfy 0 <= MIN <= MAX <= 60000 ms")
    return bounds


T = TypeVar("T")


def _parsed(text: str, parse: Callable[[str], T], expected: str) -> T:
    try:
        return parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def _rate(text: str) -> float:
    rate = _parsed(text, float, "a number from 0 to 1")
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError("the error rate must be between 0 and 1")
    return rate


def _positive(text: str) -> int:
    value = _parsed(text, int, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _port(text: str) -> int:
    value = _parsed(text, int, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0: any free one), got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_SECONDS:g} seconds")
    return value


def _token(text: str) -> tuple[str, str]:
    from evalmock.server.auth import parse_token_option

    try:
        return parse_token_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _judging_options(command: argparse.ArgumentParser, api_help: str) -> None:
    """What `evalmock contract` and `evalmock proxy` both judge by: which API, the targets, the policy, the outputs."""
    command.add_argument("--api", choices=API_CHOICES, default="all", help=api_help)
    command.add_argument("--targets", metavar="FILE", help="TOML or YAML file of known ids and facts")
    command.add_argument(
        "--strict", action="store_true", help="fail on inferred rules too (default: they are warnings)"
    )
    command.add_argument(
        "--profile", choices=PROFILES, default=DEFAULT_PROFILE,
        help=f"{LIVE_PROFILE} adds the facts of DigitalOcean's live service (default {DEFAULT_PROFILE}: the pages)",
    )
    command.add_argument("--junit", metavar="PATH", help="write JUnit XML here")
    command.add_argument("--report", metavar="PATH", help="write a conformance report here (.md or .html)")


def _walk_options(command: argparse.ArgumentParser, which: str) -> None:
    """How much walk state traffic keeps: open walks and their pages, least recently used let go first."""
    command.add_argument(
        "--max-walks", type=_positive, default=DEFAULT_MAX_WALKS, metavar="N",
        help=f"open walks followed in {which} at once (default {DEFAULT_MAX_WALKS})",
    )
    command.add_argument(
        "--max-walk-pages", type=_positive, default=DEFAULT_MAX_PAGES, metavar="N",
        help=f"pages held over all open walks (default {DEFAULT_MAX_PAGES})",
    )


def _server_option(command: argparse.ArgumentParser, default: str) -> None:
    command.add_argument(
        "--server", choices=SERVERS, default=None,
        help=f"the HTTP server: granian (Rust) or uvicorn (default {default})",
    )


class Parser(argparse.ArgumentParser):
    """argparse's parser, but options are never taken by a prefix (`--base-ur` is not `--base-url`), and an unknown
    option is told by the command it was given to, in its usage, with the closest option it has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.set_defaults(parsed_by=self)  # the deepest (sub)command's parser is the one left in the namespace

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, unknown = self.parse_known_args(args, namespace)
        given: argparse.ArgumentParser = vars(parsed).pop("parsed_by", self)
        if unknown:
            import difflib  # only for this error: every start would pay for its import

            guess = difflib.get_close_matches(unknown[0].split("=", 1)[0], list(given._option_string_actions), n=1)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            given.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="evalmock",
        description="Mock server and contract-test harness for agent-evaluation test-case APIs.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _serve_command(commands)
    _proxy_command(commands)
    _contract_command(commands)
    _rules_command(commands)
    _validate_command(commands)
    _fixtures_command(commands)
    return parser


def _serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock serve`: the mock and its world."""
    serve = commands.add_parser("serve", help="serve both APIs from a seeded world")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"interface to listen on (default {DEFAULT_HOST})")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT,
                       help=f"port (default {DEFAULT_PORT}; 0: any free one, which the banner shows)")
    serve.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"world seed (default {DEFAULT_SEED})")
    serve.add_argument(
        "--cases", type=_positive, default=DEFAULT_CASES,
        help=f"generated cases per agent and project (default {DEFAULT_CASES})",
    )
    serve.add_argument("--workers", type=_positive, default=1, help="server processes (default 1)")
    _server_option(serve, "granian where installed, else uvicorn")
    serve.add_argument(
        "--write-targets", metavar="PATH",
        help="write this world's demo tokens and known ids as a targets file for `evalmock contract`",
    )
    serve.add_argument(
        "--cursor-key", default=environment.read(environment.CURSOR_KEY),
        help="secret that seals cursors, shared by every process (default: env EVALMOCK_CURSOR_KEY, "
        "else derived from the seed)",
    )
    serve.add_argument(
        "--latency", type=_latency, default=(0, 0), metavar="MS|MIN-MAX",
        help="added latency per request in milliseconds, fixed or a uniform range (default 0)",
    )
    serve.add_argument(
        "--error-rate", type=_rate, default=0.0, metavar="RATE",
        help="fraction of requests answered with the API's transient error (default 0)",
    )
    serve.add_argument("--validate-responses", action="store_true", help="validate every response against the document")
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.add_argument("--no-cors", action="store_true", help="do not answer CORS requests")
    serve.add_argument(
        "--token", action="append", type=_token, metavar="NAME[:user|service]",
        help="accept this bearer token too, as a user (default) or a service; repeatable (also env "
        f"{ACCEPT_TOKENS_ENV}, whitespace-separated, which keeps the tokens out of the process list)",
    )
    serve.add_argument(
        "--any-token", action="store_true",
        help="accept any well-formed bearer token as a user of its own (default: only demo and --token tokens)",
    )
    serve.add_argument(
        "--allow-unknown-params", action="store_true",
        help="ignore query parameters the document does not declare (default: 400 bad-input naming them)",
    )
    serve.add_argument(
        "--data", action="append", dest="data_files", metavar="FILE",
        help="also serve your agents, projects, cases and test cases from this JSON or YAML file (repeatable); "
        "checked at start and reloaded when it changes",
    )
    serve.add_argument("--data-only", action="store_true", help="serve only the --data files, nothing generated")


def _proxy_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock proxy`: forwarding to a live service, judging what it answers."""
    proxy = commands.add_parser(
        "proxy", help="forward to a live service and judge every response it sends against the contract"
    )
    proxy.add_argument(
        "--upstream", required=True, metavar="URL", help="the service's root URL, e.g. https://staging.example.com"
    )
    proxy.add_argument("--host", default=DEFAULT_HOST, help=f"interface to listen on (default {DEFAULT_HOST})")
    proxy.add_argument("--port", type=_port, default=DEFAULT_PROXY_PORT,
                       help=f"port (default {DEFAULT_PROXY_PORT}; 0: any free one, which the banner shows)")
    _judging_options(proxy, "which API's responses to judge (default all; the other's are forwarded unjudged)")
    proxy.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_PROXY_TIMEOUT, metavar="SECONDS",
        help=f"longest wait for the upstream's answer, and between two pieces of it; then 504 "
        f"(default {DEFAULT_PROXY_TIMEOUT:g})",
    )
    proxy.add_argument("--har", metavar="PATH", help="record the traffic as a HAR 1.2 file")
    _walk_options(proxy, "the traffic")
    _server_option(proxy, "uvicorn, which adds no header of its own")


def _contract_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock contract`: an audit of a running service or of recorded traffic."""
    contract = commands.add_parser("contract", help="audit an implementation against the contract")
    contract.add_argument(
        "--base-url",
        help="the implementation's root URL, e.g. http://127.0.0.1:8080 (with --har: only entries of that service)",
    )
    contract.add_argument(
        "--har", metavar="FILE",
        help="audit recorded traffic (a HAR 1.2 file) instead of a running service: every response judged offline",
    )
    _judging_options(contract, "which API to audit (default all)")
    _walk_options(contract, "a --har file")
    contract.add_argument(
        "--token", default=None,
        help="bearer token (default: env EVALMOCK_TOKEN, else the targets file); never printed",
    )
    contract.add_argument(
        "--second-token", default=None,
        help="a second caller's token, for cursor-binding checks (default: env EVALMOCK_SECOND_TOKEN, else the "
        "targets file); never printed",
    )
    contract.add_argument(
        "--max-examples", type=_positive, default=25, help="examples per Schemathesis phase (default 25)"
    )
    contract.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generation seed (default 42)")
    contract.add_argument("--no-fuzz", action="store_true", help="run only our semantic checks, not Schemathesis")
    contract.add_argument("--quiet", action="store_true", help="no live progress, only the summary")
    contract.add_argument(
        "--workers", type=_positive, default=1,
        help="requests in flight at once: scenario checks and Schemathesis shards side by side; the verdict and "
        "findings are the same for any number (default 1)",
    )
    contract.add_argument(
        "--rate-limit", metavar="N/s", default=None,
        help="keep every request of the audit under this rate, as N/s, N/m or N/h (Schemathesis's syntax; "
        "default: no limit)",
    )
    contract.add_argument(
        "--throttle-retries", type=int, default=None, metavar="N",
        help=f"tries again per request after a 429 or a 503 with Retry-After (default {DEFAULT_RETRIES})",
    )
    contract.add_argument(
        "--throttle-max-wait", type=float, default=None, metavar="SECONDS",
        help=f"the longest Retry-After waited out (default {DEFAULT_MAX_WAIT:g})",
    )
    contract.add_argument(
        "--throttle-budget", type=float, default=None, metavar="SECONDS",
        help=f"time one audit may spend waiting out throttled answers; waits of parallel workers that overlap "
        f"count once (default {DEFAULT_BUDGET:g})",
    )
    contract.add_argument(
        "--request-timeout", type=_seconds, default=None, metavar="SECONDS",
        help=f"how long to wait for each answer; a request without one is judged by no check and leaves the audit "
        f"INCOMPLETE (default {DEFAULT_REQUEST_TIMEOUT:g})",
    )


def _rules_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock rules`: the rules, or the pages line by line."""
    rules = commands.add_parser("rules", help="list every rule the audit applies, with its level and source")
    rules.add_argument(
        "--coverage", metavar="PAGES_DIR",
        help="instead, walk the two reference pages (the folder holding them) line by line: what enforces each",
    )


def _validate_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock validate`: the documents and their lint."""
    validate = commands.add_parser("validate", help="validate OpenAPI documents and lint them")
    validate.add_argument("paths", nargs="*", metavar="PATH", help="documents (default: every one under openapi/)")


def _fixtures_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock fixtures`: curated fixtures and world exports."""
    fixtures = commands.add_parser("fixtures", help="curated fixtures and world exports")
    fixture_commands = fixtures.add_subparsers(dest="fixtures_command", required=True, metavar="ACTION")
    export = fixture_commands.add_parser(
        "export", help="write a world, or a slice of it, as a JSON data file (for `evalmock serve --data`)"
    )
    export.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"world seed (default {DEFAULT_SEED})")
    export.add_argument("--cases", type=_positive, default=DEFAULT_CASES, help="generated cases per agent and project")
    export.add_argument("--agent", help="only this agent")
    export.add_argument("--project", help="only this project")
    export.add_argument("--include-retired", action="store_true", help="retired cases too")
    export.add_argument("--kind", help="only these kinds, comma-separated (correction,hand)")
    export.add_argument("--limit", type=_positive, help="at most this many cases per agent and project")
    export.add_argument(
        "--test-case", action="append", metavar="UUID",
        help="this evaluation test case, with every version (repeatable; without --agent or --project, no cases)",
    )
    export.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
    listing = fixture_commands.add_parser("list", help="list the curated fixture cases")
    listing.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"world seed (default {DEFAULT_SEED})")
    schema = fixture_commands.add_parser("schema", help="write the JSON Schema of a data file, for editors")
    schema.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve" and args.data_only and not args.data_files:
        parser.error("--data-only serves only the --data files: name at least one")
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

        return run_fixtures
    raise AssertionError(name)  # argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
