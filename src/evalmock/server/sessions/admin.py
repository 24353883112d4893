"""The admin API's handlers (openapi/evalmock-admin.yaml, under /__evalmock): sessions, their
faults, their journal."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.responses import Response

from evalmock.contract.client_rules import judge
from evalmock.contract.schemas import pointer_tokens
from evalmock.nouns import counted
from evalmock.server.body_validation import json_path
from evalmock.server.errors import ApiError, admin_base_path, echo
from evalmock.server.responses import json_response
from evalmock.server.sessions.faults import new_fault
from evalmock.server.sessions.limits import SessionLimits
from evalmock.server.sessions.middleware import store_unavailable
from evalmock.server.sessions.records import (
    ANY_VALUE,
    JournalEntry,
    SessionRecord,
    SessionSpec,
    rfc3339,
)
from evalmock.server.sessions.store import (
    FaultQueueFull,
    SessionNotFound,
    SessionStore,
    StoreUnavailable,
    TooManySessions,
)
from evalmock.server.sessions.tokens import new_session_id, new_token, token_digest
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.world.data_files import DataFileError


def not_found(session_id: str) -> ApiError:
    return ApiError(
        404,
        "session-not-found",
        "No live session has this id: it was never created, was deleted, or ended after its idle "
        "time.",
        [{"path": "sessionId", "message": "names no live session"}],
    )


def _index_or_key(token: str) -> int | str:
    # a data file's lists are the only things numbered in it
    return int(token) if token.isdigit() else token


def _data_mistakes(exc: DataFileError) -> list[dict[str, str]]:
    return [
        {
            "path": json_path(["data", *map(_index_or_key, pointer_tokens(p.pointer))]),
            "message": p.message,
        }
        for p in exc.problems
    ]


def _filter_refused(parameter: str, message: str) -> ApiError:
    return ApiError(400, "bad-input", message, [{"path": parameter, "message": message}])


def _query_filter(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    name, equals, value = text.partition("=")
    if not name:
        raise _filter_refused(
            "query",
            f"Query parameter 'query' is NAME=VALUE, NAME or NAME=*; {echo(text)} has no NAME.",
        )
    return name, value if equals else ANY_VALUE


def _path_filter(path: str | None) -> str | None:
    """The `path` filter, refused where it is not a path: a journaled path starts with `/`, and
    its query is not in it but matched by the `query` filter (a `?` of an id, sent as `%3F`, is
    kept)."""
    query = path.partition("?")[2] if path else ""
    if path is not None and (not path.startswith("/") or path.endswith("?") or "=" in query):
        raise _filter_refused(
            "path",
            f"Query parameter 'path' is a path as sent, without its query, such as "
            f"/v1/agents/example/test-set/cases; received {echo(path)}. Filter the query with "
            f"query=NAME=VALUE.",
        )
    return path


def _matches(
    entry: JournalEntry,
    api: str | None,
    method: str | None,
    path: str | None,
    query: tuple[str, str] | None,
) -> bool:
    if (api and entry.api != api) or (method and entry.method != method):
        return False
    if path is not None and entry.path != path:
        return False
    if query is not None:
        name, wanted = query
        sent = [value for key, value in entry.query if key == name]
        if not sent or (wanted != ANY_VALUE and wanted not in sent):
            return False
    return True


class AdminApi:
    """Every operation of the admin document, over one store and this process's session worlds."""

    def __init__(
        self,
        store: SessionStore,
        worlds: SessionWorlds,
        limits: SessionLimits,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.worlds = worlds
        self.limits = limits
        self.clock = clock

    def handlers(self) -> dict[str, Callable[..., Awaitable[Response]]]:
        return {
            "createSession": self.create_session,
            "getSession": self.get_session,
            "deleteSession": self.delete_session,
            "queueFault": self.queue_fault,
            "listFaults": self.list_faults,
            "clearFaults": self.clear_faults,
            "listRequests": self.list_requests,
            "countRequests": self.count_requests,
            "clearRequests": self.clear_requests,
            "judgeSession": self.judge_session,
        }

    async def _call(self, action: Awaitable[Any], session_id: str | None = None) -> Any:
        """The store's answer, its errors as the admin API's."""
        try:
            return await action
        except SessionNotFound:
            raise not_found(session_id or "") from None
        except StoreUnavailable:
            raise store_unavailable() from None

    async def create_session(self, body: dict[str, Any] | None = None) -> Response:
        settings = body or {}
        default = self.worlds.default_spec
        spec = SessionSpec(
            seed=settings.get("seed", default.seed),
            cases=settings.get("cases", default.cases),
            data=settings.get("data"),
            data_only=settings.get("dataOnly", False),
            churn=settings.get("churn", 0),
        )
        if spec.data_only and spec.data is None:
            raise ApiError(
                400,
                "bad-input",
                "dataOnly serves only the session's data, and the body has none.",
                [{"path": "$.data", "message": "is required with dataOnly"}],
            )
        try:
            self.worlds.world(spec)  # built here, so that its refusals answer this request
        except DataFileError as exc:
            mistakes = _data_mistakes(exc)
            raise ApiError(
                400,
                "bad-input",
                f"The data breaks {counted(len(mistakes), 'rule')} of data files: "
                + "; ".join(f"{m['path']}: {m['message']}" for m in mistakes[:3]),
                mistakes,
            ) from None
        token = new_token()
        record = SessionRecord(new_session_id(), token_digest(token), spec, self.clock())
        try:
            await self._call(self.store.create(record))
        except TooManySessions:
            raise ApiError(
                429,
                "too-many-sessions",
                f"{self.limits.max_sessions} sessions are live, the most this mock keeps: delete "
                "one (DELETE /__evalmock/sessions/{id}), or wait for one to end.",
            ) from None
        return json_response(
            {
                "id": record.id,
                "token": token,
                "idleTimeoutSeconds": round(self.limits.idle_seconds),
            },
            201,
            {"Location": f"{admin_base_path()}/sessions/{record.id}"},
        )

    async def get_session(self, session_id: str) -> Response:
        state = await self._call(self.store.get(session_id))
        if state is None:
            raise not_found(session_id)
        spec = state.record.spec
        return json_response(
            {
                "id": state.record.id,
                "seed": spec.seed,
                "cases": spec.cases,
                "dataOnly": spec.data_only,
                "churn": spec.churn,
                "hasData": spec.data is not None,
                "createdAt": rfc3339(state.record.created_at),
                "lastUsedAt": rfc3339(state.last_used_at),
                "requests": state.requests,
                "faultsQueued": state.faults_queued,
            }
        )

    async def delete_session(self, session_id: str) -> Response:
        if not await self._call(self.store.delete(session_id)):
            raise not_found(session_id)
        self.worlds.forget(session_id)
        return Response(status_code=204)

    async def queue_fault(self, session_id: str, body: dict[str, Any]) -> Response:
        fault = new_fault(body)
        try:
            await self._call(self.store.push_fault(session_id, fault), session_id)
        except FaultQueueFull:
            raise ApiError(
                409,
                "fault-queue-full",
                f"The session has {self.limits.max_faults} faults queued, the most it keeps: let "
                "them be used, or clear them (DELETE .../faults).",
            ) from None
        return json_response(fault.to_json(), 201)

    async def list_faults(self, session_id: str) -> Response:
        faults = await self._call(self.store.faults(session_id), session_id)
        return json_response({"faults": [fault.to_json() for fault in faults]})

    async def clear_faults(self, session_id: str) -> Response:
        await self._call(self.store.clear_faults(session_id), session_id)
        return Response(status_code=204)

    async def _matching(
        self,
        session_id: str,
        api: str | None,
        method: str | None,
        path: str | None,
        query: str | None,
    ) -> tuple[list[JournalEntry], int]:
        wanted, path = _query_filter(query), _path_filter(path)
        method = method.upper() if method else method  # as curl's -X, get is GET
        journal = await self._call(self.store.journal(session_id), session_id)
        kept = [e for e in journal.entries if _matches(e, api, method, path, wanted)]
        return kept, journal.dropped

    async def list_requests(
        self,
        session_id: str,
        api: str | None = None,
        method: str | None = None,
        path: str | None = None,
        query: str | None = None,
        limit: int | None = None,
    ) -> Response:
        entries, dropped = await self._matching(session_id, api, method, path, query)
        if limit is not None:
            entries = entries[-limit:]
        return json_response(
            {"requests": [entry.to_json() for entry in entries], "dropped": dropped}
        )

    async def count_requests(
        self,
        session_id: str,
        api: str | None = None,
        method: str | None = None,
        path: str | None = None,
        query: str | None = None,
    ) -> Response:
        entries, _ = await self._matching(session_id, api, method, path, query)
        return json_response({"count": len(entries)})

    async def clear_requests(self, session_id: str) -> Response:
        await self._call(self.store.clear_journal(session_id), session_id)
        return Response(status_code=204)

    async def judge_session(self, session_id: str, strict: bool = False) -> Response:
        """The client rules over the journal, oldest first; what the bound dropped is not judged,
        and says so."""
        journal = await self._call(self.store.journal(session_id), session_id)
        exchanges = [entry.exchange() for entry in journal.entries]
        return json_response(judge(exchanges, dropped=journal.dropped, strict=strict).to_json())
