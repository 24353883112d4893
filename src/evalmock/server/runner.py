"""`evalmock serve`: settings, world, targets file, banner, then Granian or uvicorn (one process, or
N workers)."""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import sys

from evalmock.contract.targets import dump_targets
from evalmock.exits import FAILED, USAGE
from evalmock.nouns import counted
from evalmock.server.app import create_app
from evalmock.server.auth import accepted_tokens
from evalmock.server.banner import banner
from evalmock.server.http_server import (
    CannotListen,
    ServeOptions,
    ServerUnavailable,
    check_available,
    check_can_listen,
    default_server,
    serve_app,
    serve_workers,
)
from evalmock.server.listening import announce_when_listening, listening_url
from evalmock.server.live_world import build_world
from evalmock.server.sessions.store_choice import StoreURLError, check_store, parse_store
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world.data_files import DataFileError

ASGI_APP = "evalmock.server.asgi:app"


def freeze_startup_objects() -> None:
    """Move everything built at start out of the collector's reach (call once the app exists).

    The documents, compiled validators and world vocabularies live as long as the process, yet every
    full collection walked them; frozen, full collections stay short (they were the p99 tail under
    load).
    """
    gc.collect()
    gc.freeze()


def refusal(error: DataFileError) -> str:
    """Why nothing is served: every problem of the data files, one per line."""
    count = len(error.problems)
    head = f"evalmock serve: the data files have {counted(count, 'problem')}; nothing is served:"
    return "\n".join([head, *map(str, error.problems)])


def serve(args: argparse.Namespace) -> int:
    try:
        from_env = accepted_tokens(os.environ)
    except ValueError as exc:
        print(f"evalmock serve: {exc}", file=sys.stderr)
        return USAGE
    settings = ServerSettings.from_args(args)
    settings = dataclasses.replace(settings, tokens=(*settings.tokens, *from_env))
    try:
        store = parse_store(settings.store)
    except StoreURLError as exc:
        print(f"evalmock serve: {exc}", file=sys.stderr)
        return USAGE
    server = getattr(args, "server", None) or default_server()
    try:
        check_available(server)
    except ServerUnavailable as exc:
        print(f"evalmock serve: {exc}", file=sys.stderr)
        return USAGE
    try:
        world = build_world(settings)
    except DataFileError as error:
        print(refusal(error), file=sys.stderr)
        return USAGE
    try:  # before the targets file is written and the banner invites anyone to the port
        settings = dataclasses.replace(
            settings, port=check_can_listen(settings.host, settings.port)
        )
    except CannotListen as exc:
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
    if settings.write_targets:
        try:
            dump_targets(
                targets_for(world, listening_url(settings.host, settings.port)),
                settings.write_targets,
            )
        except OSError as exc:
            print(
                f"evalmock serve: cannot write {settings.write_targets}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return USAGE
    print(banner(settings, world, server), flush=True)
    if store is not None:
        check_store(store)
    announce_when_listening(settings.host, settings.port)
    options = ServeOptions(settings.host, settings.port, settings.access_log)
    if settings.workers > 1:
        # Each worker imports ASGI_APP and rebuilds the same settings (and cursor key) from the
        # environment.
        os.environ.update(settings.to_env())
        return serve_workers(ASGI_APP, server, options, settings.workers)
    app = create_app(settings, world)
    freeze_startup_objects()
    return serve_app(app, server, options)
