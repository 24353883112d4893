"""An independent implementation of both APIs in plain Starlette, written from the two reference
pages and the project's page readings only, that can differ from evalmock's mock in each way the
pages allow, one named variation at a time.

Without variations it answers as the pages say and, where they leave a choice, as evalmock's mock
does, so that each variation shows on its own what a fair harness must accept. `TEST_SET` and
`GRADIENT` below are the reference pages' seed files; "readings" are rows of the project's page
readings (levels page, inferred, live, open).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import json
import re
import secrets
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from shared import LIMIT  # the page's numbers (bounds, default): a revision moves them

from .service_data import (
    AGENTS,
    CALLERS,
    CASES,
    LATER_FIELDS,
    LATER_FILTERS,
    REFUSED_TOKENS,
    TEST_CASES,
    WITHOUT_READ,
    Caller,
    Case,
)

if TYPE_CHECKING:
    from .moving_list import MovingList

TEST_SET = "000_f4434837f5b13534.txt"
GRADIENT = "004_ad1dfd63bbdc293b.txt"

ROTATE_EVERY = 5  # cursors sealed with one key, when the keys rotate

# Each way this service may differ from the mock, and what allows it.
VARIATIONS: dict[str, str] = {
    # -- errors and headers --
    "plain_405": f"{TEST_SET}:6-7 and {GRADIENT}:5 document GET only; readings: other methods are "
    "open, "
    "except Schemathesis's unsupported_method (405 + Allow). A framework's own text/plain 405.",
    "not_implemented_501": f"{TEST_SET}:6-7 and {GRADIENT}:5 document GET only; RFC 9110 9.1: a "
    "method the server "
    "does not implement at all SHOULD get 501 (405 is for one it implements elsewhere). "
    "Answers every method but GET and HEAD with a plain-text 501, as http.server does.",
    "no_ratelimit_headers": f"{GRADIENT} never mentions rate limits; readings: the ratelimit-* "
    "headers are live "
    "(declared, not required, in DigitalOcean's spec).",
    "own_request_ids": f'{TEST_SET}:279 "Server-assigned request id"; readings: an incoming '
    "X-Request-Id is "
    "open (echoing one is allowed, not required). Ignores it; ids of its own shape.",
    "success_without_request_id": f"{TEST_SET}:279 ties X-Request-Id to the error envelope's "
    "requestId only; "
    "no X-Request-Id on a 200.",
    "other_401_code": f"{TEST_SET}:285 the 401 example's code is \"example\"; readings: the 401's "
    "code string "
    "is open. Answers `unauthenticated`.",
    "other_details": f'{TEST_SET}:268-270 details: "Optional, kind-specific." Left out on 401 and '
    "404, and "
    "another shape on 400.",
    "charset_json": f'{TEST_SET}:51 "Media typeapplication/json": sent with a charset parameter.',
    "validate_before_auth": f"{TEST_SET}:252 and :292 do not say which of 400 and 401 wins when "
    "both apply: "
    "parameters are checked before the token.",
    "agent_before_validation": f"{TEST_SET}:252 and :332 do not say which of 400 and 404 wins when "
    "both apply: "
    "the agent is looked up before the parameters are checked.",
    "ignores_unknown_params": f"{TEST_SET}:14-47 and {GRADIENT}:13-17 list the parameters and say "
    "nothing of "
    "others: undeclared query parameters are ignored (the mock refuses them).",
    "duplicate_params_first_wins": "neither page says what a repeated query parameter means: the "
    "first value "
    "is taken (the mock refuses the request).",
    # -- the test-set list --
    "no_expert": f'{TEST_SET}:210 "Absent from older servers.": no case carries `expert`.',
    "rank_gaps": f'{TEST_SET}:149-151 rank: "The item’s position in the ranked list (0 = first).", '
    "an "
    "integer; readings: the judged items' ranks need not be 0..n-1. Ranks 1, 3, 5.",
    "own_id_shapes": f'{TEST_SET}:60 "A correction’s case has the correction’s id; a hand case’s '
    "starts "
    'case-.": UUID correction ids and `case-<n>` hand ids.',
    "unsealed_cursors": f'{TEST_SET}:47 binds cursors only for "A runtime that seals cursors"; '
    ":215 "
    '"Opaque cursor." A base64 offset (a string that is no cursor is still 400).',
    "clamped_limit": f"{TEST_SET}:252 names only projectId, include and kind; readings: a 400 for "
    "limit "
    f"outside {LIMIT['minimum']}..{LIMIT['maximum']} is inferred. Clamped into those bounds "
    "instead.",
    "cursor_on_last_page": f"{TEST_SET}:212-217 nextCursor is optional and no sentence ties it to "
    "hasMore; "
    "readings: no nextCursor on the last page is inferred. A string pointing past the end.",
    "lazy_has_more": f"{TEST_SET}:218-220 hasMore is a required boolean, with no sentence; "
    "readings: a non-empty "
    "page after hasMore true is inferred. hasMore is whether the page is full.",
    "no_read_403": f'{TEST_SET}:12 "Needs read on the project." names no status for a caller '
    "without it; "
    "readings: any 4xx conforms, the status is open. 403 forbidden (the plain service answers 404 "
    "agent-not-found).",
    "empty_params_left_out": f'{TEST_SET}:30 and :36 "Left out, ..."; readings: an empty include= '
    "or kind= is "
    "open (read as left out, or refused with 400). Read as left out (the plain service "
    "refuses them with 400).",
    "foreign_project_404": "readings: a valid project UUID that is not the agent's is open. "
    "Answered 404 "
    "agent-not-found (the agent is not found in that project).",
    "upper_case_project_ids": f'{TEST_SET}:75 projectId "string format: uuid" (:9, the page\'s own '
    "request, "
    "spells one in upper case): cases carry it in upper case.",
    "offset_timestamps": f'{TEST_SET}:174 "string format: date-time" and {GRADIENT}:27 '
    '"formatdate-time" '
    "(RFC 3339): addedAt at +01:00 with milliseconds, updatedAt the same instant in Z form.",
    "equal_added_at": f'{TEST_SET}:12 "newest added first" orders nothing among cases added at the '
    "same "
    "instant: cases come in pairs with equal addedAt.",
    "extra_fields": "neither page says an object has no other fields: pages and cases carry one "
    "more.",
    "single_use_cursors": f'{TEST_SET}:47 lists why a cursor is refused ("only for the same '
    'list, filters and caller, within a day"); readings: the same cursor sent twice gets the same '
    "page (inferred: GET is safe and idempotent, RFC 9110 9.2.1-2). A cursor that got its page "
    "once is refused with 400 bad-input the second time.",
    "rotating_cursor_keys": f'{TEST_SET}:47 "takes one only for the same list, filters and '
    'caller, within a day": the key that seals cursors is replaced after every '
    f"{ROTATE_EVERY} cursors issued, its id inside each cursor; a cursor sealed with an older "
    "key is taken for its day.",
    "busy_now_and_then": f'{TEST_SET}:372 "The database was too busy to answer in time '
    "(database-busy); "
    'Retry-After (whole seconds) says when to try again.": every 20th list request gets '
    "it, with Retry-After: 0.",
    # -- the DigitalOcean call --
    "do_400_malformed_id": f'{GRADIENT}:11 "testCaseUuid string", and the page states no error at '
    "all; "
    "readings: 404 for a malformed id is live. 400 for an id that is not a UUID.",
    "do_problem_json_errors": f"{GRADIENT} states no error body; readings: DigitalOcean's {{id, "
    f"message}} is "
    "live. Errors as application/problem+json.",
    "do_bare_401": f"{GRADIENT} states no 401 at all: a bare 401 with WWW-Authenticate and no "
    "body.",
    "do_first_version_by_default": f'{GRADIENT}:15-17 "Version of the test case.", optional; '
    "readings: the "
    "latest without one is live. Answers the first version.",
    "do_omits_zero_values": f"{GRADIENT}:23-187 every field is optional: zero values are left out, "
    "as "
    "proto3 JSON does (no archived_at, total_runs 0, inverted false...).",
    "do_below_1_is_the_latest": f'{GRADIENT}:15-17 "Version of the test case." names no version '
    "below 1; readings: such a version is open (proto3's unset 0). Version 0, or a negative one, "
    "is answered with the latest.",
    "do_ignores_a_malformed_version": f"{GRADIENT}:15 types the version int64; readings: a 400 for "
    "one that is not an integer is inferred. Such a version is ignored: a 200 with the latest.",
    "do_unlisted_metric_category": f"{GRADIENT}:83-97 list six categories; readings: a value no "
    "enum lists is inferred (DigitalOcean has since added METRIC_CATEGORY_CONVERSATIONAL). Every "
    "metric's category is that one.",
}

# Defects: each breaks a rule of the pages, so an audit must fail it (the twin of the mutation
# suite, for what the mock cannot be made to do).
DEFECTS: dict[str, str] = {
    "cursor_not_bound_to_the_agent": f'{TEST_SET}:47 a sealed cursor is taken "only for the same '
    'list, filters and caller": this one is bound to the project, filters and caller, not to the '
    "agent, so the same project under another agent takes it.",
    "rotation_refuses_older_cursors": f'{TEST_SET}:47 "takes one only for the same list, '
    'filters and caller, within a day": the key that seals cursors is replaced after every '
    f"{ROTATE_EVERY} cursors issued, and only the current key is trusted, so a cursor minutes "
    "old is refused once the key changed.",
    "latest_cursor_only": f'{TEST_SET}:47 "takes one only for the same list, filters and caller, '
    'within a day": cursors are kept server-side in one slot, and only the latest one issued is '
    "taken, so a walk beside another (two page sizes, two callers) is refused its next page.",
}

UUID_TEXT = re.compile(
    r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
)
KIND = re.compile(r"(correction|hand)(,(correction|hand))*")  # the page's pattern, TEST_SET:34
BEARER = re.compile(r"Bearer ([A-Za-z0-9\-._~+/]+=*)")  # RFC 6750 b64token
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
INTEGER = re.compile(r"[+-]?[0-9]{1,40}")
INT64 = range(-(2**63), 2**63)  # the page's `param.Field[int64]`, GRADIENT:15
TEST_SET_PARAMS = frozenset({"projectId", "include", "kind", "limit", "cursor", *LATER_FILTERS})
GRADIENT_PARAMS = frozenset({"evaluation_test_case_version"})
BUSY_EVERY = 20
CURSOR_LIFETIME = 86400  # "within a day", TEST_SET:47
ID_NAMESPACE = uuid.UUID("8d5f3c1e-2b4a-4f6e-9a0b-c1d2e3f4a5b6")


@dataclass(frozen=True)
class Refusal:
    """An error answer before rendering: status, the code the page names, a message and details."""

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ListQuery:
    project: str  # lower case
    include: str  # "retired" or ""
    kinds: tuple[str, ...]
    limit: int
    cursor: str | None
    later: tuple[tuple[str, str], ...] = ()  # (filter, value) of each of LATER_FILTERS asked


def _bad(parameter: str, message: str) -> Refusal:
    return Refusal(400, "bad-input", message, {"parameter": parameter})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _position(value: Any, moving: bool) -> bool:
    """A cursor's position: an offset, or (on a moving list) the (addedAt, id) of a page's last
    case."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value >= 0
    return (
        moving
        and isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
    )


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _without_zero_values(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_zero_values(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (0, False, "", [], {})}
    if isinstance(value, list):
        return [_without_zero_values(v) for v in value]
    return value


class Service:
    """Both APIs over the fixed data of `service_data`; `variations` may change between requests."""

    def __init__(
        self, variations: Iterable[str] = (), *, clock: Callable[[], float] = time.time
    ) -> None:
        self.clock = clock
        self.keys = {"k0": secrets.token_bytes(32)}  # key id -> key; the last is current
        self.variations: frozenset[str] = frozenset()
        self.met: Counter[str] = Counter()  # how often each variation changed an answer
        self.moving: MovingList | None = None  # the main project as a list in use, when set
        self.use(variations)
        self._request_numbers = itertools.count(1)
        self._remaining = itertools.count(4999, -1)
        self._listings = itertools.count(1)
        self._latest_cursor: str | None = None  # latest_cursor_only: the one slot
        self._used_cursors: set[str] = set()  # single_use_cursors: those that got their page
        self._issued = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/agents/{agentId}/test-set/cases", self.list_cases, methods=["GET"]),
                Route(
                    "/v2/gen-ai/evaluation_test_cases/{test_case_uuid}",
                    self.get_test_case,
                    methods=["GET"],
                ),
            ],
            exception_handlers={HTTPException: self.routing_error},
        )

    def use(self, variations: Iterable[str]) -> None:
        """Switch to these variations (none: the plain reading of the pages) and forget what was
        met."""
        chosen = frozenset(variations)
        unknown = chosen - VARIATIONS.keys() - DEFECTS.keys()
        if unknown:
            raise ValueError(f"unknown variations: {sorted(unknown)}")
        self.variations = chosen
        self.met.clear()
        self._issued_sealed = itertools.count(1)  # keys rotate at the same requests each time

    def varies_if(self, name: str, differs: bool) -> bool:
        """Whether `name` is on where it would change the answer (`differs`); counted as met only
        then."""
        return differs and self.varies(name)

    def varies(self, name: str) -> bool:
        """Whether `name` is on; counted as met, so call it only where the answer then differs."""
        if name in self.variations:
            self.met[name] += 1
            return True
        return False

    # -- what both APIs share
    # -------------------------------------------------------------------------
    def _request_id(self, request: Request) -> str:
        if self.varies("own_request_ids"):
            return f"req_{next(self._request_numbers):08d}"
        incoming = request.headers.get("x-request-id", "")
        return incoming if SANE_REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex

    def _json(
        self, status: int, body: Any, headers: dict[str, str], media_type: str = "application/json"
    ) -> Response:
        if self.varies("charset_json"):
            media_type += "; charset=utf-8"
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        return Response(content, status, headers=headers, media_type=media_type)

    def _caller(self, request: Request) -> Caller | Refusal:
        """ "Missing / malformed / expired / revoked bearer token." (TEST_SET:292); a made-up one
        reads nothing."""
        header = request.headers.get("authorization")
        if header is None:
            return Refusal(401, "unauthorized", "A bearer token is required.")
        match = BEARER.fullmatch(header)
        if match is None:
            return Refusal(401, "unauthorized", "The Authorization header is not a bearer token.")
        token = match.group(1)
        if token in REFUSED_TOKENS:
            return Refusal(
                401, f"token-{REFUSED_TOKENS[token]}", f"The token is {REFUSED_TOKENS[token]}."
            )
        if token not in CALLERS:
            return Refusal(401, "unauthorized", "The token is not known here.")
        return CALLERS[token]

    def _query(self, request: Request, declared: frozenset[str]) -> dict[str, str] | Refusal:
        """The query as one value per name; undeclared or repeated parameters refused (unless
        varied)."""
        items = request.query_params.multi_items()
        names = [name for name, _ in items]
        unknown = sorted(set(names) - declared)
        if unknown and not self.varies("ignores_unknown_params"):
            return _bad(unknown[0], f"Unknown query parameter '{unknown[0]}'.")
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated and not self.varies("duplicate_params_first_wins"):
            return _bad(repeated[0], f"Query parameter '{repeated[0]}' is given more than once.")
        query: dict[str, str] = {}
        for name, value in items:
            query.setdefault(name, value)
        return query

    async def routing_error(self, request: Request, exc: Exception) -> Response:
        """No route (404) or another method than GET (405), in the API's own error body."""
        assert isinstance(exc, HTTPException)
        headers = dict(exc.headers or {})
        if (
            exc.status_code == 405
            and request.method not in ("GET", "HEAD")
            and self.varies("not_implemented_501")
        ):
            return PlainTextResponse("Not Implemented", 501)
        if exc.status_code == 405 and self.varies("plain_405"):
            # what Starlette answers by itself
            return PlainTextResponse(exc.detail, 405, headers=headers)
        if request.url.path.startswith("/v2/"):
            code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
            return self._do_error(Refusal(exc.status_code, code, exc.detail), request, headers)
        code = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "error")
        return self._envelope(
            Refusal(exc.status_code, code, exc.detail), self._request_id(request), headers
        )

    # -- GET /v1/agents/{agentId}/test-set/cases
    # ------------------------------------------------------------
    def _envelope(
        self, refusal: Refusal, request_id: str, headers: dict[str, str] | None = None
    ) -> Response:
        """TEST_SET:252-330: `{error: {code, message, details?, requestId}}`, requestId echoed in
        X-Request-Id."""
        code = refusal.code
        if refusal.status == 401 and self.varies("other_401_code"):
            code = "unauthenticated"
        error: dict[str, Any] = {
            "code": code,
            "message": refusal.message,
            "details": refusal.details,
        }
        if self.varies("other_details"):
            if refusal.status == 400:
                error["details"] = {
                    "invalid": [{"name": refusal.details.get("parameter"), "reason": "invalid"}]
                }
            else:
                del error["details"]
        error["requestId"] = request_id
        return self._json(
            refusal.status, {"error": error}, {**(headers or {}), "X-Request-Id": request_id}
        )

    def _list_query(self, request: Request) -> ListQuery | Refusal:
        query = self._query(request, TEST_SET_PARAMS)
        if isinstance(query, Refusal):
            return query
        project = query.get("projectId")
        if project is None:
            return _bad("projectId", "Query parameter 'projectId' is required.")
        if not UUID_TEXT.fullmatch(project):
            return _bad("projectId", "Query parameter 'projectId' must be a UUID.")
        if self.varies_if(
            "empty_params_left_out", any(query.get(name) == "" for name in ("include", "kind"))
        ):
            query = {
                name: value
                for name, value in query.items()
                if value != "" or name not in ("include", "kind")
            }
        include = query.get("include", "")
        if "include" in query and include != "retired":
            return _bad("include", "Query parameter 'include' may only be 'retired'.")
        kind = query.get("kind")
        if kind is not None and not KIND.fullmatch(kind):
            return _bad(
                "kind", "Query parameter 'kind' lists 'correction' and 'hand', comma-separated."
            )
        later = tuple((name, query[name]) for name in sorted(LATER_FILTERS) if name in query)
        for name, value in later:
            if value not in LATER_FIELDS[name]:
                allowed = ", ".join(LATER_FIELDS[name])
                return _bad(name, f"Query parameter '{name}' may be {allowed}.")
        low, high = LIMIT["minimum"], LIMIT["maximum"]
        raw_limit = query.get("limit", str(LIMIT["default"]))
        if not INTEGER.fullmatch(raw_limit):
            return _bad("limit", "Query parameter 'limit' must be an integer.")
        limit = int(raw_limit)
        if not low <= limit <= high:
            if not self.varies("clamped_limit"):
                return _bad("limit", f"Query parameter 'limit' must be within {low}..{high}.")
            limit = min(max(limit, low), high)
        kinds = tuple(sorted(set(kind.split(",")))) if kind else ("correction", "hand")
        return ListQuery(project.lower(), include, kinds, limit, query.get("cursor"), later)

    def _first_refusal(self, outcomes: dict[str, Any]) -> Refusal | None:
        """Token (401), then parameters (400), then the agent (404), unless a variation reorders
        them."""
        order = ["auth", "query", "agent"]
        if "validate_before_auth" in self.variations:
            order = ["query", "auth", "agent"]
        if "agent_before_validation" in self.variations:
            order.remove("agent")
            order.insert(order.index("query"), "agent")
        plain = next(
            (outcomes[s] for s in ("auth", "query", "agent") if isinstance(outcomes[s], Refusal)),
            None,
        )
        chosen = next((outcomes[s] for s in order if isinstance(outcomes[s], Refusal)), None)
        if chosen is not plain:
            for name in ("validate_before_auth", "agent_before_validation"):
                self.varies(name)
        return chosen

    async def list_cases(self, request: Request) -> Response:
        request_id = self._request_id(request)
        agent = request.path_params["agentId"]
        caller, query = self._caller(request), self._list_query(request)
        unknown_agent = (
            None
            if agent in AGENTS
            else Refusal(404, "agent-not-found", f"No agent '{agent}'.", {"agentId": agent})
        )
        refusal = self._first_refusal({"auth": caller, "query": query, "agent": unknown_agent})
        if refusal is not None:
            return self._envelope(refusal, request_id)
        assert isinstance(caller, Caller) and isinstance(query, ListQuery)
        if caller.id in WITHOUT_READ:
            if self.varies("no_read_403"):
                return self._envelope(
                    Refusal(403, "forbidden", "This caller may not read the project."), request_id
                )
            return self._envelope(
                Refusal(
                    404,
                    "agent-not-found",
                    f"No agent '{agent}' for this caller.",
                    {"agentId": agent},
                ),
                request_id,
            )
        cases = (
            [c for c in CASES if c.agent == agent and c.project == query.project]
            if self.moving is None
            else self.moving.stored(agent, query.project)
        )
        if not cases and self.varies("foreign_project_404"):
            return self._envelope(
                Refusal(
                    404,
                    "agent-not-found",
                    f"No agent '{agent}' in project '{query.project}'.",
                    {"agentId": agent},
                ),
                request_id,
            )
        if next(self._listings) % BUSY_EVERY == 0 and self.varies("busy_now_and_then"):
            busy = Refusal(
                503,
                "database-busy",
                "The database was too busy to answer in time; try again.",
                {"retryAfterSeconds": 0},
            )
            return self._envelope(busy, request_id, {"Retry-After": "0"})
        binding = {
            "a": agent,
            "p": query.project,
            "i": query.include,
            "k": ",".join(query.kinds),
            "c": caller.id,
            **{f"f-{name}": value for name, value in query.later},
        }
        offset = self._read_cursor(query.cursor, binding) if query.cursor is not None else 0
        if isinstance(offset, Refusal):
            return self._envelope(offset, request_id)
        if query.cursor is not None:
            if query.cursor in self._used_cursors and self.varies("single_use_cursors"):
                return self._envelope(_bad("cursor", "This cursor was used already."), request_id)
            self._used_cursors.add(query.cursor)
        listed = [
            c
            for c in cases
            if c.kind in query.kinds
            and (query.include or c.retired is None)
            and set(query.later) <= set(c.later)
        ]
        # "newest added first"
        if self.moving is None:
            listed.sort(key=lambda c: (self._added_at(c), c.number), reverse=True)
            window = listed[offset : offset + query.limit]
            has_more = offset + query.limit < len(listed)
            following: Any = offset + query.limit
        else:
            position = None if query.cursor is None else offset
            window, has_more, following = self.moving.window(
                listed, position, query.limit, self._added_at, self._case_id
            )
        if not has_more and window and len(window) == query.limit and self.varies("lazy_has_more"):
            has_more = True
        body: dict[str, Any] = {"data": [self._case(c) for c in window], "hasMore": has_more}
        if has_more:
            body["nextCursor"] = self._issue_cursor(binding, following)
        elif self.varies("cursor_on_last_page"):
            body["nextCursor"] = self._issue_cursor(binding, len(listed))
        if self.varies("extra_fields"):
            body["limit"] = query.limit
        headers = {} if self.varies("success_without_request_id") else {"X-Request-Id": request_id}
        return self._json(200, body, headers)

    def _issue_cursor(self, binding: dict[str, str], offset: Any) -> str:
        # single_use_cursors: each cursor issued is another (as a store of used ones needs)
        once = {"n": next(self._issued)} if "single_use_cursors" in self.variations else {}
        if self.varies("unsealed_cursors"):
            cursor = _b64(json.dumps({"o": offset, **once}).encode())
        else:
            key_id = next(reversed(self.keys))
            payload = _b64(
                json.dumps(
                    {**binding, "o": offset, "t": int(self.clock()), "kid": key_id, **once},
                    sort_keys=True,
                ).encode()
            )
            cursor = f"{payload}.{self._sign(payload, key_id)}"
            rotating = self.variations & {"rotating_cursor_keys", "rotation_refuses_older_cursors"}
            if rotating and next(self._issued_sealed) % ROTATE_EVERY == 0:
                self.keys[f"k{len(self.keys)}"] = secrets.token_bytes(32)
        self._latest_cursor = cursor
        return cursor

    def _sign(self, payload: str, key_id: str) -> str:
        return _b64(hmac.new(self.keys[key_id], payload.encode(), hashlib.sha256).digest())

    def _key_of(self, payload: str) -> str | None:
        """The id of the key that sealed this payload, if it is one the service trusts."""
        try:
            key_id = json.loads(_unb64(payload)).get("kid")
        except (ValueError, binascii.Error, AttributeError):
            return None
        if key_id not in self.keys:
            return None
        if key_id != next(reversed(self.keys)):
            if self.varies("rotation_refuses_older_cursors"):
                return None
            self.varies("rotating_cursor_keys")
        return str(key_id)

    def _read_cursor(self, raw: str, binding: dict[str, str]) -> Any:
        """TEST_SET:47: a sealed cursor only "for the same list, filters and caller, within a
        day"."""
        refused = _bad(
            "cursor",
            "The cursor is not one for this list, these filters and this caller; start "
            "again without it.",
        )
        if raw != self._latest_cursor and self.varies("latest_cursor_only"):
            return refused
        sealed = "unsealed_cursors" not in self.variations
        payload, _, signature = raw.partition(".") if sealed else (raw, "", "")
        key_id = self._key_of(payload) if sealed else None
        if sealed and (
            key_id is None
            or not hmac.compare_digest(signature.encode(), self._sign(payload, key_id).encode())
        ):
            return refused
        try:
            data = json.loads(_unb64(payload))
        except (ValueError, binascii.Error):
            return refused
        if not isinstance(data, dict) or not _position(data.get("o"), self.moving is not None):
            return refused
        other = {k for k in binding if data.get(k) != binding[k]}
        if other == {"a"} and self.varies("cursor_not_bound_to_the_agent"):
            other = set()
        if sealed and (other or not 0 <= self.clock() - data.get("t", 0) <= CURSOR_LIFETIME):
            return refused
        return data["o"]

    def _added_at(self, case: Case) -> datetime:
        # equal_added_at: an even-numbered case shares its addedAt with the odd one after it
        if case.number % 2 and self.varies("equal_added_at"):
            return case.added_at - timedelta(hours=5, seconds=1)
        return case.added_at

    def _case(self, c: Case) -> dict[str, Any]:
        added = self._added_at(c)
        # "its addedAt until it’s retired", TEST_SET:178
        updated = c.retired[2] if c.retired else added
        added_text = _stamp(added)
        if self.varies("offset_timestamps"):
            added_text = added.astimezone(timezone(timedelta(hours=1))).isoformat(
                timespec="milliseconds"
            )
        project = c.project.upper() if self.varies("upper_case_project_ids") else c.project
        case: dict[str, Any] = {
            "id": self._case_id(c),
            "kind": c.kind,
            "projectId": project,
            "runId": c.run,
            "madeOn": c.made_on,
            "expect": self._expect(c),
            "addedBy": {"kind": c.added_by.kind, "id": c.added_by.id},
            "addedAt": added_text,
            "updatedAt": _stamp(updated),
        }
        if c.retired is not None:
            reason, by, at = c.retired
            case["retired"] = {
                "reason": reason,
                "by": {"kind": by.kind, "id": by.id},
                "at": _stamp(at),
            }
        if c.expert and not self.varies("no_expert"):
            case["expert"] = True
        case.update(c.later)
        if self.varies("extra_fields"):
            case["labels"] = ["fairness"]
        return case

    def _case_id(self, c: Case) -> str:
        if self.varies("own_id_shapes"):
            return (
                f"case-{c.number}"
                if c.kind == "hand"
                else str(uuid.uuid5(ID_NAMESPACE, str(c.number)))
            )
        digest = hashlib.sha256(f"{c.project}/{c.number}".encode()).hexdigest()[:8]
        return f"case-{digest}" if c.kind == "hand" else f"corr-{digest}"

    def _expect(self, c: Case) -> dict[str, Any]:
        expect = json.loads(json.dumps(c.expect))  # a copy to render into
        ranked = [item for item in expect.get("items", []) if "rank" in item]
        if ranked and self.varies("rank_gaps"):
            for item in ranked:
                item["rank"] = 2 * item["rank"] + 1
        return expect

    # -- GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid}
    # ----------------------------------------------
    def _do_headers(self, request_id: str) -> dict[str, str]:
        headers = {"X-Request-Id": request_id}
        if not self.varies("no_ratelimit_headers"):
            now = int(self.clock())
            headers.update(
                {
                    "ratelimit-limit": "5000",
                    "ratelimit-remaining": str(max(next(self._remaining), 0)),
                    "ratelimit-reset": str(now - now % 3600 + 3600),
                }
            )
        return headers

    def _do_error(
        self, refusal: Refusal, request: Request, headers: dict[str, str] | None = None
    ) -> Response:
        request_id = self._request_id(request)
        headers = {**(headers or {}), **self._do_headers(request_id)}
        if refusal.status == 401 and self.varies("do_bare_401"):
            return Response(
                status_code=401, headers={**headers, "WWW-Authenticate": 'Bearer realm="gen-ai"'}
            )
        if self.varies("do_problem_json_errors"):
            problem = {
                "type": "about:blank",
                "title": HTTPStatus(refusal.status).phrase,
                "status": refusal.status,
                "detail": refusal.message,
            }
            return self._json(refusal.status, problem, headers, "application/problem+json")
        body = {"id": refusal.code, "message": refusal.message, "request_id": request_id}
        return self._json(refusal.status, body, headers)

    async def get_test_case(self, request: Request) -> Response:
        caller = self._caller(request)
        if isinstance(caller, Refusal):
            return self._do_error(
                Refusal(401, "unauthorized", "Unable to authenticate you."), request
            )
        query = self._query(request, GRADIENT_PARAMS)
        if isinstance(query, Refusal):
            return self._do_error(Refusal(400, "bad_request", query.message), request)
        raw_version = query.get("evaluation_test_case_version")
        if raw_version is not None and not (
            INTEGER.fullmatch(raw_version) and int(raw_version) in INT64
        ):
            if not self.varies("do_ignores_a_malformed_version"):
                return self._do_error(
                    Refusal(400, "bad_request", "The version must be a 64-bit integer."), request
                )
            raw_version = None
        test_case_uuid = request.path_params["test_case_uuid"]
        if not UUID_TEXT.fullmatch(test_case_uuid) and self.varies("do_400_malformed_id"):
            return self._do_error(
                Refusal(400, "bad_request", "The test case id is not a UUID."), request
            )
        versions = TEST_CASES.get(test_case_uuid.lower())
        not_found = Refusal(404, "not_found", "The resource you were accessing could not be found.")
        if versions is None:
            return self._do_error(not_found, request)
        if raw_version is not None:
            version = int(raw_version)
        elif len(versions) > 1 and self.varies("do_first_version_by_default"):
            version = min(versions)
        else:
            version = max(versions)
        if version < 1 and self.varies("do_below_1_is_the_latest"):
            version = max(versions)
        if version not in versions:
            return self._do_error(not_found, request)
        test_case = versions[version]
        if self.varies("do_unlisted_metric_category"):
            metrics = [
                {**metric, "category": "METRIC_CATEGORY_CONVERSATIONAL"}
                for metric in test_case["metrics"]
            ]
            test_case = {**test_case, "metrics": metrics}
        if self.varies("offset_timestamps"):
            test_case = {**test_case, "created_at": test_case["created_at"].replace("Z", "+00:00")}
        if self.varies("do_omits_zero_values"):
            test_case = _without_zero_values(test_case)
        return self._json(
            200, {"evaluation_test_case": test_case}, self._do_headers(self._request_id(request))
        )
