"""The options of `evalmock serve` for sessions: the token that guards its admin API (sessions,
faults, the journal), and where sessions are kept."""

from __future__ import annotations

import argparse

from evalmock import environment
from evalmock.defaults import DEFAULT_STORE, REDIS_STORE_FORM


def admin_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--admin-token",
        default=environment.read(environment.ADMIN_TOKEN),
        metavar="TOKEN",
        help="every request to the admin API (/__evalmock: sessions, faults, the journal) must "
        "carry this bearer token; with it the admin API is on for any --host (default: env "
        f"{environment.ADMIN_TOKEN}; without one, it is on only for a loopback --host)",
    )
    serve.add_argument(
        "--store",
        metavar="STORE",
        default=environment.read(environment.STORE) or DEFAULT_STORE,
        help="where sessions, their faults and journals are kept: in this process "
        f"({DEFAULT_STORE}, the default), or in Redis, shared by every replica started with the "
        f"same URL ({REDIS_STORE_FORM}, rediss:// for TLS; also env {environment.STORE}, which "
        "keeps a password out of the process list)",
    )
