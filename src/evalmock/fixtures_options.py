"""The options of `evalmock fixtures`: export a world or a slice, import recorded traffic, list the
curated cases, write the data file's JSON Schema."""

from __future__ import annotations

import argparse

from evalmock.arguments import positive, world_options
from evalmock.record_options import import_command


def fixtures_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock fixtures`: curated fixtures and world exports."""
    fixtures = commands.add_parser("fixtures", help="curated fixtures and world exports")
    fixture_commands = fixtures.add_subparsers(
        dest="fixtures_command", required=True, metavar="ACTION"
    )
    _export_command(fixture_commands)
    import_command(fixture_commands)
    listing = fixture_commands.add_parser("list", help="list the curated fixture cases")
    world_options(listing, cases=False)
    schema = fixture_commands.add_parser(
        "schema", help="write the JSON Schema of a data file, for editors"
    )
    schema.add_argument(
        "--output", "-o", default="-", help="file to write (default: standard output)"
    )


def _export_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock fixtures export`: a world, or a slice of it, as a data file."""
    export = actions.add_parser(
        "export",
        help="write a world, or a slice of it, as a JSON data file (for `evalmock serve --data`)",
    )
    world_options(export)
    export.add_argument("--agent", help="only this agent")
    export.add_argument("--project", help="only this project")
    export.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="only the cases the list answers with this filter of the document (repeatable): "
        "--filter kind=hand, --filter include=retired",
    )
    export.add_argument(
        "--include-retired",
        action="store_true",
        help="retired cases too (--filter include=retired)",
    )
    export.add_argument("--kind", help="only these kinds, comma-separated (--filter kind=...)")
    export.add_argument(
        "--limit", type=positive, help="at most this many cases per agent and project"
    )
    export.add_argument(
        "--test-case",
        action="append",
        metavar="UUID",
        help="this evaluation test case, with every version (repeatable; without --agent or "
        "--project, no cases)",
    )
    short = "short-form cases: each without what loading fills back as it was (default: whole)"
    export.add_argument("--short", action="store_true", help=short)
    export.add_argument(
        "--output", "-o", default="-", help="file to write (default: standard output)"
    )
