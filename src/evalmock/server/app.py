"""The app factory: both documents on one Connexion AsyncApp, with our middleware stack and error
bodies."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from connexion import AsyncApp
from connexion.datastructures import MediaTypeDict
from connexion.middleware.lifespan import LifespanMiddleware
from connexion.middleware.response_validation import ResponseValidationMiddleware
from connexion.middleware.server_error import ServerErrorMiddleware
from connexion.options import SwaggerUIOptions

from evalmock.contract.documents import ADMIN, APIS
from evalmock.defaults import DEFAULT_STORE
from evalmock.server import errors
from evalmock.server.admin_access import admin_security_map, without_admin_token
from evalmock.server.auth import AuthMiddleware, Tokens, security_map, with_demo_tokens
from evalmock.server.body_validation import bounded_json_body
from evalmock.server.cors_options import CORS_OPTIONS, ServerCORSMiddleware
from evalmock.server.cursors import CursorSealer
from evalmock.server.data_watcher import DataWatcher, FilesState, files_state
from evalmock.server.dispatch import PreparedApp
from evalmock.server.handlers import build_handlers, resolver
from evalmock.server.health import HealthMiddleware
from evalmock.server.listening import listening_url
from evalmock.server.live_world import LiveWorld, build_world
from evalmock.server.prefer import LatencyMiddleware, ScenarioMiddleware
from evalmock.server.ratelimit import RateLimitCounter, RateLimitHeadersMiddleware
from evalmock.server.request_id import RequestIdMiddleware
from evalmock.server.routing import DocumentRoutingMiddleware
from evalmock.server.sessions import SessionSpec, SessionStore
from evalmock.server.sessions.admin import AdminApi
from evalmock.server.sessions.admission import admin_api_off_reason
from evalmock.server.sessions.middleware import FaultMiddleware, SessionMiddleware
from evalmock.server.sessions.store_choice import open_store
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.server.settings import ServerSettings
from evalmock.server.swagger_ui import SwaggerUIAfterRouting
from evalmock.server.targets_file import rewrite_targets
from evalmock.server.validation import VALIDATOR_MAP, ValidationMiddleware
from evalmock.world import World


@dataclasses.dataclass(frozen=True)
class Sessions:
    """What the sessions of one app share: the store and this process's session worlds."""

    store: SessionStore
    worlds: SessionWorlds
    clock: Callable[[], float]


def _sessions(
    settings: ServerSettings, live: LiveWorld, store: SessionStore, clock: Callable[[], float]
) -> Sessions:
    """Sessions whose default world is the mock's generated one (its seed and cases, without its
    data files, which sessions never see): the served world object itself when that is what it
    serves."""
    if settings.data_files or settings.data_only:
        plain = dataclasses.replace(settings, data_files=(), data_only=False)
        default_world = functools.cache(partial(build_world, plain))
    else:

        def default_world() -> World:
            return live.world

    spec = SessionSpec(seed=settings.seed, cases=settings.cases)
    worlds = SessionWorlds(spec, default_world, store.limits.max_worlds)
    return Sessions(store, worlds, clock)


def _middlewares(settings: ServerSettings, sessions: Sessions, *, lifespan: bool) -> list[Any]:
    """The whole stack, outermost first; Connexion's own middlewares keep their usual order.

    Error handling, routing and security are Connexion's middlewares as subclasses that do less per
    request (errors.py, routing.py, auth.py), each driven by the same documents and handlers; CORS
    is Starlette's.

    What is off is left out, so a request does not pass through it: latency, response validation,
    and the lifespan middleware when the app has no lifespan of its own (no data files to watch).
    """
    counter = RateLimitCounter()
    headers = [RequestIdMiddleware, partial(RateLimitHeadersMiddleware, counter=counter)]
    cors = [partial(ServerCORSMiddleware, **CORS_OPTIONS)] if settings.cors else []
    latency = [partial(LatencyMiddleware, latency_ms=settings.latency_ms, seed=settings.seed)]
    return [
        # Outside the error handlers, so that every answer, errors and preflights included, has
        # these headers.
        *headers,
        # Outside the error handlers too, so that a session's journal sees every answer.
        partial(
            SessionMiddleware, store=sessions.store, worlds=sessions.worlds, clock=sessions.clock
        ),
        *cors,
        partial(ServerErrorMiddleware, handler=errors.on_unhandled),
        errors.ErrorHandlersMiddleware,
        DocumentRoutingMiddleware,
        # Without an admin token, the admin document as Swagger UI shows it asks for none.
        partial(
            SwaggerUIAfterRouting,
            shown={} if settings.admin_token else {ADMIN.base_path: without_admin_token},
        ),
        *(latency if settings.latency_ms[1] else []),
        AuthMiddleware,
        ValidationMiddleware,
        # Response validation checks that required headers are present, so the headers are added
        # before it looks.
        *([ResponseValidationMiddleware, *headers] if settings.validate_responses else []),
        *([LifespanMiddleware] if lifespan else []),
        # A session's queued fault first; Prefer and the error rate when none answers.
        partial(FaultMiddleware, store=sessions.store),
        partial(ScenarioMiddleware, error_rate=settings.error_rate, seed=settings.seed),
        # No ContextMiddleware: it publishes the operation and scope in context variables for
        # handlers that read `connexion.context`; ours get every value as an argument (dispatch.py).
    ]


def create_app(
    settings: ServerSettings | None = None,
    world: World | None = None,
    *,
    clock: Callable[[], float] = time.time,
    store: SessionStore | None = None,
    session_clock: Callable[[], float] = time.time,
) -> AsyncApp:
    """Both APIs (/v1 and /v2) with Swagger UI at {base}/ui/; `clock` is the cursors' time source.

    Without `world`, the settings' world (DataFileError when a data file has a problem). With data
    files, the app reloads them while it runs (from its lifespan's start to its end). The admin API
    (/__evalmock) keeps sessions in `store` (default: the one `settings.store` names); it is on
    only where `admin_api_off_reason` finds nothing against it.
    """
    settings = settings or ServerSettings()
    read = files_state(settings.data_files)  # before the world reads them: see DataWatcher
    live = LiveWorld(world if world is not None else build_world(settings), settings.data_files)
    sessions = _sessions(settings, live, store or open_store(settings.store), session_clock)
    handlers = build_handlers(
        live, CursorSealer(settings.cursor_key_bytes, clock=clock), settings.churn
    )
    watcher = _data_watcher(settings, live, read) if settings.data_files else None
    app = PreparedApp(
        __name__,
        lifespan=watcher.lifespan if watcher else None,
        middlewares=[
            partial(HealthMiddleware, live=live),
            *_middlewares(settings, sessions, lifespan=watcher is not None),
        ],
        resolver=resolver(handlers),
        security_map=security_map(Tokens(settings.tokens, any_token=settings.any_token)),
        validator_map=VALIDATOR_MAP,
        strict_validation=settings.strict_validation,
        validate_responses=settings.validate_responses,
        pythonic_params=True,
        swagger_ui_options=SwaggerUIOptions(swagger_ui=True, swagger_ui_path="/ui"),
    )
    for api in APIS.values():
        # The document as parsed once for the whole process (Connexion would parse its file again);
        # Connexion edits what it is given, so it gets a copy.
        app.add_api(with_demo_tokens(api.served_spec()), base_path=api.base_path, name=api.name)
    off = admin_api_off_reason(
        settings.host,
        settings.admin_token,
        workers=settings.workers,
        shared_store=store is not None or settings.store != DEFAULT_STORE,
    )
    if off is None:
        _add_admin_api(app, settings, sessions)
    errors.install(app)
    return app


def _data_watcher(settings: ServerSettings, live: LiveWorld, read: FilesState) -> DataWatcher:
    """The watcher of the data files, which `read` describes as they were before the world read
    them; on a reload it rewrites the targets file, when one is written."""
    on_reload = (
        partial(
            rewrite_targets,
            settings.write_targets,
            base_url=listening_url(settings.host, settings.port),
        )
        if settings.write_targets
        else None
    )
    return DataWatcher(live, on_reload, read)


def _add_admin_api(app: AsyncApp, settings: ServerSettings, sessions: Sessions) -> None:
    limits = sessions.store.limits
    admin = AdminApi(sessions.store, sessions.worlds, limits, sessions.clock)
    body = MediaTypeDict({"*/*json": bounded_json_body(limits.max_body_bytes)})
    app.add_api(
        ADMIN.served_spec(),
        base_path=ADMIN.base_path,
        name=ADMIN.name,
        resolver=resolver(admin.handlers()),
        security_map=admin_security_map(settings.admin_token or None),
        validator_map={**VALIDATOR_MAP, "body": body},
        strict_validation=True,
    )
