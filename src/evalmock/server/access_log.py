"""The access lines of `evalmock serve --access-log`: one shape whichever server writes them
(uvicorn's), and no secret in them: the value of a query parameter whose name says secret (or that
an apiKey scheme names) is hidden, and so is a session token in the path."""

from __future__ import annotations

import copy
import functools
import logging
import re
from collections.abc import Mapping
from typing import Any

from evalmock.contract.secret_names import secret_query

HIDDEN = "[hidden]"
# Granian's access-log format, read by RequestLine below.
GRANIAN_ACCESS_FORMAT = (
    "%(addr)s %(method)s %(path)s %(query_string)s %(protocol)s %(status)d %(dt_ms)f"
)
_QUERY_PAIR = re.compile(r"(?<=[?&;])([^=&;#\s]+)=([^&;#\s]*)")


def hidden_secrets(target: str) -> str:
    """A request target (path and query) with the values of secret-named query parameters hidden,
    and a session token in the path (pasted where a session id goes) too."""
    path, mark, query = target.partition("?")
    path = _session_token_hidden(path)
    if not mark:
        return path
    return f"{path}?" + _QUERY_PAIR.sub(_hide, "?" + query)[1:]


@functools.cache
def _session_token() -> re.Pattern[str]:
    # imported when first needed: the sessions package imports Connexion, which the command line
    # (importing this module) must not import before a server process defers what it never runs
    from evalmock.server.sessions.tokens import TOKEN_PREFIX

    return re.compile(r"(?<=/)" + re.escape(TOKEN_PREFIX) + r"[^/?#\s]*")  # a whole segment


def _session_token_hidden(path: str) -> str:
    return _session_token().sub(HIDDEN, path)


def _hide(match: re.Match[str]) -> str:
    name, value = match.groups()
    return f"{name}={HIDDEN}" if value and secret_query(name) else match.group()


class RequestLine(logging.Filter):
    """Granian's access record as one line in uvicorn's shape (client, request line with its query
    if any, status); Granian's own format cannot leave out an empty query's `?`."""

    def filter(self, record: logging.LogRecord) -> bool:
        values = record.args
        if isinstance(values, Mapping) and "query_string" in values:
            query = values["query_string"]
            target = hidden_secrets(f"{values['path']}?{query}") if query else values["path"]
            record.msg = '%s - "%s %s %s" %d (%.1f ms)'
            record.args = (
                values["addr"],
                values["method"],
                target,
                values["protocol"],
                values["status"],
                values["dt_ms"],
            )
        return True


class UvicornRequestLine(logging.Filter):
    """uvicorn's access record with secret-named query values hidden (its third value is the request
    target)."""

    def filter(self, record: logging.LogRecord) -> bool:
        values = record.args
        if isinstance(values, tuple) and len(values) == 5 and isinstance(values[2], str):
            record.args = (*values[:2], hidden_secrets(values[2]), *values[3:])
        return True


def uvicorn_logging() -> dict[str, Any]:
    """uvicorn's own logging configuration, its access lines passed through UvicornRequestLine and
    its errors through ForcedStop (a configuration, not filters added in this process, so that every
    worker process gets them)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    filters = config.setdefault("filters", {})
    filters["hidden_secrets"] = {"()": f"{__name__}.UvicornRequestLine"}
    filters["forced_stop"] = {"()": "evalmock.server.forced_stop.ForcedStop"}
    config["handlers"]["access"]["filters"] = ["hidden_secrets"]
    config["handlers"]["default"]["filters"] = ["forced_stop"]
    return config
