"""GET /v1/agents/{agentId}/test-set/cases: a validated request -> a world query -> a page with a
sealed cursor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from connexion.decorators.parameter import pythonic
from starlette.responses import Response

from evalmock.contract.filters import narrowing
from evalmock.contract.operations import operation
from evalmock.server.cursors import Binding, CursorError, CursorSealer, DataChanged
from evalmock.server.errors import agent_not_found, bad_input, unknown_agent
from evalmock.server.live_world import LiveWorld
from evalmock.server.responses import encoded_json_response, json_response
from evalmock.server.sessions.active import ActiveSession, active_session
from evalmock.world import CaseQuery, EncodedPage, World
from evalmock.world.churn import ChurningWorld

EMPTY_PAGE = {"data": [], "hasMore": False}
DATA_CHANGED = (
    "The data changed since the cursor was issued, so the list starts again: send the request "
    "without it."
)

# The parameters a sealed cursor is bound to (the document says), in its order.
BOUND = operation("test-set").query_marked("cursor-binds")
# Each filter's name in the document, by the handler argument Connexion passes it as (`runId` comes
# as `run_id`).
FILTER_OF_ARGUMENT = {pythonic(declared.name): declared.name for declared in narrowing()}


def page_body(cases: list[bytes], next_cursor: str | None) -> bytes:
    """The CasePage `{"data": [...], "nextCursor": ..., "hasMore": ...}` joined from already encoded
    cases, byte for byte what orjson writes for the same page decoded (compact, keys in this
    order)."""
    if next_cursor is None:
        tail = b'],"hasMore":false}'
    else:
        tail = b'],"nextCursor":' + orjson.dumps(next_cursor) + b',"hasMore":true}'
    if not cases:
        return b'{"data":[' + tail
    # One copy of the page: the opening glued to the first case, the tail to the last, then one
    # join. Joining the cases and then the three parts copied the whole page twice (a walk's page of
    # 100 cases is 100 KB).
    parts = list(cases)  # the caller's list stays as it was
    parts[0] = b'{"data":[' + parts[0]
    parts[-1] += tail
    return b",".join(parts)


def _bad_cursor(reason: str) -> Exception:
    return bad_input(
        "cursor",
        f"The cursor is not valid for this list, these filters and this caller ({reason}); start "
        "again without it.",
    )


class TestSetCases:
    """The listTestSetCases operation over the live world."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, live: LiveWorld, sealer: CursorSealer, churn: int = 0) -> None:
        self.live = live
        self.sealer = sealer
        self.churn = churn  # 0: the lists stand still, and a page costs nothing more
        self._churning: ChurningWorld | None = None

    def _page(
        self,
        world: World,
        query: CaseQuery,
        after: int | None,
        limit: int,
        session: ActiveSession | None,
    ) -> EncodedPage:
        if session is not None:
            if not session.churn:
                return world.encoded_page(query, after, limit)
            return session.churning().encoded_page(query, after, limit)
        if not self.churn:
            return world.encoded_page(query, after, limit)
        if self._churning is None or self._churning.world is not world:
            # a reload's world: the lists it left alone keep moving as they were, so their
            # cursors still open; the lists it changed start still again
            self._churning = ChurningWorld(world, self.churn, carried=self._churning)
        return self._churning.encoded_page(query, after, limit)

    async def list_cases(
        self,
        agent_id: str,
        project_id: str,
        limit: int,  # the document's default when left out (dispatch.py passes it)
        cursor: str | None = None,
        token_info: Mapping[str, Any] | None = None,
        **filters: str,
    ) -> Response:
        # this request's world to its end, whatever a reload swaps in meanwhile; a session's own
        session = active_session()
        world = self.live.world if session is None else session.world
        projects = world.projects_of(agent_id)
        if projects is None:
            raise unknown_agent(agent_id)
        if not (token_info or {}).get("reads", True):
            # "Needs read on the project.": a caller without it learns nothing, not even that the
            # agent exists
            raise agent_not_found(agent_id)
        asked = {FILTER_OF_ARGUMENT.get(name, name): value for name, value in filters.items()}
        query = CaseQuery.asked(agent_id, project_id, asked)
        caller = (token_info or {}).get("sub", "")
        binding = Binding(agent_id, query.bound(BOUND), caller, world.list_generation(query))
        after = None
        if cursor is not None:
            try:
                after = self.sealer.open(cursor, binding)
            except DataChanged:
                raise bad_input("cursor", DATA_CHANGED) from None
            except CursorError as exc:
                raise _bad_cursor(exc.reason) from None
        if query.project_id not in projects:
            return json_response(EMPTY_PAGE)  # a project that is not the agent's: nothing to list
        try:
            page = self._page(world, query, after, limit, session)
        except ValueError:
            raise _bad_cursor("it points nowhere in this list") from None
        next_cursor = (
            None if page.next_position is None else self.sealer.seal(page.next_position, binding)
        )
        if session is not None:
            session.next_cursor = next_cursor  # for its journal
        return encoded_json_response(page_body(page.cases, next_cursor))
