"""The option of `evalmock serve` that guards its admin API (sessions, faults, the journal)."""

from __future__ import annotations

import argparse

from evalmock import environment


def admin_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--admin-token",
        default=environment.read(environment.ADMIN_TOKEN),
        metavar="TOKEN",
        help="every request to the admin API (/__evalmock: sessions, faults, the journal) must "
        "carry this bearer token; with it the admin API is on for any --host (default: env "
        f"{environment.ADMIN_TOKEN}; without one, it is on only for a loopback --host)",
    )
