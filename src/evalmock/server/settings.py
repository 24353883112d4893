"""What one server runs with: built from `evalmock serve`'s arguments, or from the environment in a
worker."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass

from evalmock import environment
from evalmock.defaults import DEFAULT_CASES, DEFAULT_HOST, DEFAULT_PORT, DEFAULT_SEED, DEFAULT_STORE

# Every worker process of `--workers N` rebuilds its settings from this variable (see asgi.py).
SETTINGS_ENV = environment.SERVE_SETTINGS
CURSOR_KEY_ENV = environment.CURSOR_KEY


def default_cursor_key(seed: int) -> str:
    """A key derived from the seed, so that every process of one server (and every restart)
    agrees."""
    return hashlib.sha256(f"evalmock cursor key, seed {seed}".encode()).hexdigest()


@dataclass(frozen=True)
class ServerSettings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    seed: int = DEFAULT_SEED
    cases: int = DEFAULT_CASES
    workers: int = 1
    cursor_key: str = ""  # empty: derived from the seed
    latency_ms: tuple[int, int] = (0, 0)
    error_rate: float = 0.0
    validate_responses: bool = False
    access_log: bool = False
    cors: bool = True
    # Unknown query parameters are a 400 bad-input: a typo such as `limt=10` must not pass
    # unnoticed.
    strict_validation: bool = True
    write_targets: str | None = None
    tokens: tuple[
        tuple[str, str], ...
    ] = ()  # (token, "user" | "service") registered besides the demo tokens
    any_token: bool = False  # accept any non-empty bearer token as a user of its own
    data_files: tuple[
        str, ...
    ] = ()  # the user's data files, served with (or, data_only, without) the world's
    data_only: bool = False
    churn: int = 0  # a case arrives in a list every `churn` requests of it (0: lists stand still)
    # what every admin API request must carry; empty: the admin API is on only on loopback
    admin_token: str = ""
    store: str = DEFAULT_STORE  # `memory`, or the Redis URL every replica shares sessions through

    def __post_init__(self) -> None:
        if not self.cursor_key:
            object.__setattr__(self, "cursor_key", default_cursor_key(self.seed))
        object.__setattr__(self, "latency_ms", tuple(self.latency_ms))
        object.__setattr__(self, "tokens", tuple(tuple(pair) for pair in self.tokens))
        object.__setattr__(self, "data_files", tuple(self.data_files))

    @property
    def cursor_key_bytes(self) -> bytes:
        return self.cursor_key.encode()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServerSettings:
        """From `evalmock serve`'s parsed arguments (attribute names as in cli.py)."""
        return cls(
            host=args.host,
            port=args.port,
            seed=args.seed,
            cases=args.cases,
            workers=args.workers,
            cursor_key=args.cursor_key or "",
            latency_ms=tuple(args.latency),
            error_rate=args.error_rate,
            validate_responses=args.validate_responses,
            access_log=args.access_log,
            cors=not args.no_cors,
            strict_validation=not args.allow_unknown_params,
            write_targets=args.write_targets,
            tokens=tuple(args.token or ()),
            any_token=args.any_token,
            data_files=tuple(args.data_files or ()),
            data_only=args.data_only,
            churn=args.churn or 0,
            admin_token=args.admin_token or "",
            store=args.store or DEFAULT_STORE,
        )

    def to_env(self) -> dict[str, str]:
        """Environment variables a worker process reads back with `from_env`."""
        return {SETTINGS_ENV: json.dumps(dataclasses.asdict(self))}

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> ServerSettings:
        """From `to_env`'s variable; without it, the defaults (with EVALMOCK_CURSOR_KEY if set)."""
        environ = os.environ if environ is None else environ
        raw = environ.get(SETTINGS_ENV)
        if not raw:
            return cls(cursor_key=environ.get(CURSOR_KEY_ENV, ""))
        values = json.loads(raw)
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})
