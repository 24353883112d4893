"""The options of record and replay: `evalmock proxy --record`, `evalmock fixtures import`, and the
`--anonymize` both take."""

from __future__ import annotations

import argparse

from evalmock.arguments import seed
from evalmock.defaults import DEFAULT_SEED


def record_options(proxy: argparse.ArgumentParser) -> None:
    """`evalmock proxy --record DATA [--anonymize [--seed N]]`."""
    proxy.add_argument(
        "--record",
        metavar="DATA",
        help="record what the APIs answered as a data file for `evalmock serve --data` (YAML, or "
        "JSON for a .json path)",
    )
    anonymize_options(proxy, "the --record file")


def import_command(fixture_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`evalmock fixtures import`: recorded traffic made a data file."""
    importing = fixture_commands.add_parser(
        "import",
        help="make the answers of recorded traffic (HAR files) a data file for `evalmock serve "
        "--data`",
    )
    importing.add_argument(
        "--har", required=True, nargs="+", metavar="FILE", help="HAR 1.2 files, read in order"
    )
    importing.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DATA",
        help="the data file to write (YAML, or JSON for a .json path)",
    )
    anonymize_options(importing, "the data file")


def anonymize_options(parser: argparse.ArgumentParser, written: str) -> None:
    parser.add_argument(
        "--anonymize",
        action="store_true",
        help=f"people's ids and e-mails in {written} replaced by made-up ones, the same person "
        "the same everywhere",
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=DEFAULT_SEED,
        help=f"the seed of --anonymize's made-up people (default {DEFAULT_SEED})",
    )
