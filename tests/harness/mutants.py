"""Realistic defects planted in our own server by test code: an ASGI switch that rewrites requests
and responses, and patches of the world and the cursor sealer. Nothing here is reachable from the
shipped CLI."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from evalmock.contract.filters import list_key
from evalmock.harness.checks.filters import UNRULED
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.server import cursors
from evalmock.server.cursors import Binding, CursorError, CursorSealer
from evalmock.server.handlers import test_set
from evalmock.world import CaseQuery, EncodedPage, World
from shared import LIMIT

Scope = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
RequestRewrite = Callable[[Scope], Scope]
ResponseRewrite = Callable[[Scope, int, Headers, bytes], tuple[int, Headers, bytes]]
Patch = Callable[[pytest.MonkeyPatch, World], None]
DEFAULT = Policy()


@dataclass(frozen=True)
class Mutation:
    """One planted defect, the check that must catch it, and the scenario checks that reach it."""

    name: str
    defect: str
    caught_by: str
    scenarios: tuple[str, ...]
    api: str = "test-set"
    request: RequestRewrite | None = None
    response: ResponseRewrite | None = None
    patch: Patch | None = None
    policy: Policy = (
        DEFAULT  # strict for a defect that breaks an inferred rule, live for a live one
    )


class MutationSwitch:
    """An ASGI wrapper around the real app that applies the current mutation, if any."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.mutation: Mutation | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        mutation = self.mutation
        if scope["type"] != "http" or mutation is None:
            await self.app(scope, receive, send)
            return
        if mutation.request is not None:
            scope = mutation.request(dict(scope))
        if mutation.response is None:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    status, headers, body = mutation.response(
                        scope, start["status"], list(start["headers"]), b"".join(chunks)
                    )
                    headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(body)).encode()))
                    await send(
                        {"type": "http.response.start", "status": status, "headers": headers}
                    )
                    await send({"type": "http.response.body", "body": body})
            else:
                await send(message)

        await self.app(scope, receive, capture)


# -- building blocks
# ------------------------------------------------------------------------------------
def _query(scope: Scope) -> dict[str, str]:
    return dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))


def rewrite_query(edit: Callable[[dict[str, str]], None]) -> RequestRewrite:
    def request(scope: Scope) -> Scope:
        params = _query(scope)
        edit(params)
        scope["query_string"] = urlencode(params).encode("latin-1")
        return scope

    return request


def _is_list(scope: Scope) -> bool:
    return scope["path"].endswith("/test-set/cases")


def _header(headers: Headers, name: bytes) -> bytes | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _set_header(headers: Headers, name: bytes, value: bytes | None) -> Headers:
    kept = [(k, v) for k, v in headers if k.lower() != name]
    return kept + ([(name, value)] if value is not None else [])


def on_pages(edit: Callable[[dict[str, Any], dict[str, str]], None]) -> ResponseRewrite:
    """Edit the body of every 200 page of listTestSetCases (given the request's query)."""

    def response(
        scope: Scope, status: int, headers: Headers, body: bytes
    ) -> tuple[int, Headers, bytes]:
        if status == 200 and _is_list(scope):
            page = json.loads(body)
            edit(page, _query(scope))
            body = json.dumps(page).encode()
        return status, headers, body

    return response


def on_cases(edit: Callable[[dict[str, Any]], None]) -> ResponseRewrite:
    def each(page: dict[str, Any], query: dict[str, str]) -> None:
        for case in page["data"]:
            edit(case)

    return on_pages(each)


def on_errors(
    api: str, edit: Callable[[int, Headers, bytes], tuple[int, Headers, bytes]]
) -> ResponseRewrite:
    prefix = "/v1/" if api == "test-set" else "/v2/"

    def response(
        scope: Scope, status: int, headers: Headers, body: bytes
    ) -> tuple[int, Headers, bytes]:
        if status >= 400 and scope["path"].startswith(prefix):
            return edit(status, headers, body)
        return status, headers, body

    return response


def patch_world(
    replace_page: Callable[[Callable[..., EncodedPage], Any, int | None, int], EncodedPage],
) -> Patch:
    def patch(monkeypatch: pytest.MonkeyPatch, world: World) -> None:
        original = world.encoded_page  # what the server serves pages from
        monkeypatch.setattr(
            world,
            "encoded_page",
            lambda query, after, limit: replace_page(original, query, after, limit),
        )

    return patch


def patch_binding(drop: str) -> Patch:
    """Seal cursors without part of their binding ("filters", "caller" or "agent")."""

    def bind(agent_id: str, values: tuple[Any, ...], caller: str, *rest: Any) -> Binding:
        if drop == "filters":  # the list's project alone: every filter bound as if left out
            project = values[test_set.BOUND.index(list_key().name)]
            values = CaseQuery.asked(agent_id, project, {}).bound(test_set.BOUND)
        elif drop == "agent":  # the project, filters and caller still bound
            # the list's generation names the agent too (a hash of its list): dropped with it
            agent_id, rest = "any-agent", ()
        else:
            caller = "anyone"
        return Binding(agent_id, values, caller, *rest)

    def patch(monkeypatch: pytest.MonkeyPatch, world: World) -> None:
        monkeypatch.setattr(test_set, "Binding", bind)

    return patch


def patch_open(on_error: Callable[[str], int]) -> Patch:
    """Replace what the sealer does with a cursor it refuses."""
    original = CursorSealer.open

    def open_cursor(self: CursorSealer, cursor: str, binding: Binding) -> int:
        try:
            return original(self, cursor, binding)
        except CursorError:
            return on_error(cursor)

    def patch(monkeypatch: pytest.MonkeyPatch, world: World) -> None:
        monkeypatch.setattr(CursorSealer, "open", open_cursor)

    return patch


def _position_without_mac(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return cursors._PAYLOAD.unpack(raw[: cursors._PAYLOAD.size])[1]
    except Exception as exc:
        raise CursorError("not a cursor") from exc


def _crash(cursor: str) -> int:
    raise RuntimeError("cursor decoding crashed")


# -- the defects
# ----------------------------------------------------------------------------------------
def _overlap(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    page = original(query, after, limit)
    if limit > 1 and page.next_position is not None:
        return EncodedPage(page.cases, original(query, after, limit - 1).next_position)
    return page


def _skip_one(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    page = original(query, after, limit)
    if page.next_position is not None:
        return EncodedPage(page.cases, original(query, after, limit + 1).next_position)
    return page


def _cases_before(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> int:
    """How many cases the pages before the one starting after `after` held, at this limit."""
    delivered, position = 0, None
    while position != after:
        page = original(query, position, limit)
        if page.next_position is None:
            break
        delivered, position = delivered + len(page.cases), page.next_position
    return delivered


def _ends_early(limit_applies: Callable[[int], bool], last_page: int) -> Callable[..., EncodedPage]:
    """A list that claims to end (hasMore: false, no nextCursor) on page `last_page` at the limits
    it applies to."""

    def page(
        original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
    ) -> EncodedPage:
        found = original(query, after, limit)
        if (
            limit_applies(limit)
            and _cases_before(original, query, after, limit) >= (last_page - 1) * limit
        ):
            return EncodedPage(found.cases, None)
        return found

    return page


def _all_kinds(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    return original(
        dataclasses.replace(query, kinds=frozenset({"correction", "hand"})), after, limit
    )


def _always_retired(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    return original(dataclasses.replace(query, include_retired=True), after, limit)


def _never_retired(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    return original(dataclasses.replace(query, include_retired=False), after, limit)


def _retired_drops_active(
    original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
) -> EncodedPage:
    """With include=retired, the list's first active case is left out (it stands on every walk's
    first page)."""
    found = original(query, after, limit)
    if not query.include_retired or after is not None:
        return found
    first_active = next((n for n, case in enumerate(found.cases) if b'"retired"' not in case), None)
    if first_active is None:
        return found
    return EncodedPage(
        found.cases[:first_active] + found.cases[first_active + 1 :], found.next_position
    )


def _other_project(world: World) -> Callable[..., EncodedPage]:
    def page(
        original: Callable[..., EncodedPage], query: Any, after: int | None, limit: int
    ) -> EncodedPage:
        others = [p for p in world.project_ids(query.agent_id) if p != query.project_id.lower()]
        return original(
            dataclasses.replace(query, project_id=others[0]) if others else query, after, limit
        )

    return page


def _patch_other_project(monkeypatch: pytest.MonkeyPatch, world: World) -> None:
    patch_world(_other_project(world))(monkeypatch, world)


SHORT_DEFAULT = LIMIT["default"] * 4 // 5  # a default page a fifth short: 20 for the page's 25


def _default_limit_20(params: dict[str, str]) -> None:
    params.setdefault("limit", str(SHORT_DEFAULT))


def _ignore_limit(params: dict[str, str]) -> None:
    params.pop("limit", None)


def _accept_out_of_range_limit(params: dict[str, str]) -> None:
    if params.get("limit") in {str(LIMIT["minimum"] - 1), str(LIMIT["maximum"] + 1)}:
        params.pop("limit")


def _drop_filters_without_a_rule(params: dict[str, str]) -> None:
    for declared in UNRULED:
        params.pop(declared.name, None)


def _drop_version(params: dict[str, str]) -> None:
    params.pop("evaluation_test_case_version", None)


def _drop_malformed_version(params: dict[str, str]) -> None:
    version = params.get("evaluation_test_case_version")
    if version is not None and not version.lstrip("-").isdigit():
        del params["evaluation_test_case_version"]


def _version_off_by_one(params: dict[str, str]) -> None:
    version = params.get("evaluation_test_case_version", "")
    if version.isdigit() and int(version) > 1:
        params["evaluation_test_case_version"] = str(int(version) - 1)


def _no_auth_needed(scope: Scope) -> Scope:
    if _header(scope["headers"], b"authorization") is None:
        scope["headers"] = [*scope["headers"], (b"authorization", b"Bearer demo-user")]
    return scope


def _drop_cursor_when_more(page: dict[str, Any], query: dict[str, str]) -> None:
    page.pop("nextCursor", None)


def _cursor_on_last_page(page: dict[str, Any], query: dict[str, str]) -> None:
    if not page["hasMore"]:
        page["nextCursor"] = "bGFzdA"


def _oldest_first(page: dict[str, Any], query: dict[str, str]) -> None:
    page["data"].reverse()


def _hand_id(case: dict[str, Any]) -> None:
    if case["kind"] == "hand":
        case["id"] = "hand-" + case["id"].removeprefix("case-")


def _touch_updated_at(case: dict[str, Any]) -> None:
    if "retired" not in case:
        case["updatedAt"] = "2030-01-01T00:00:00Z"


def _drop_expert_on_hand(case: dict[str, Any]) -> None:
    if case["kind"] == "hand":
        case.pop("expert", None)


def _ranks_from_one(case: dict[str, Any]) -> None:
    for position, item in enumerate(case["expect"].get("items", [])):
        item["rank"] = position + 1


def _long_args(case: dict[str, Any]) -> None:
    case["expect"]["decisions"] = {
        "verdict": "wrong",
        "shouldCall": [{"tool": "search", "args": {"q": "x" * 4100}}],
    }


def _retired_before_added(case: dict[str, Any]) -> None:
    if "retired" in case:
        case["retired"]["at"] = "2001-01-01T00:00:00Z"


def _drop_request_id(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    return status, _set_header(headers, b"x-request-id", None), body


def _no_envelope_request_id(
    status: int, headers: Headers, body: bytes
) -> tuple[int, Headers, bytes]:
    envelope = json.loads(body)
    del envelope["error"]["requestId"]
    return status, headers, json.dumps(envelope).encode()


def _other_request_id(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    return status, _set_header(headers, b"x-request-id", b"not-the-request-id"), body


def _problem_json(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    problem = {
        "type": "about:blank",
        "title": "Error",
        "detail": "It went wrong.",
        "status": status,
    }
    return (
        status,
        _set_header(headers, b"content-type", b"application/problem+json"),
        json.dumps(problem).encode(),
    )


def _unknown_agent_empty(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    if status == 404:
        return 200, headers, json.dumps({"data": [], "hasMore": False}).encode()
    return status, headers, body


def _not_found_code(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    if status == 404:
        envelope = json.loads(body)
        envelope["error"]["code"] = "not-found"
        body = json.dumps(envelope).encode()
    return status, headers, body


def _drop_retry_after(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    return status, _set_header(headers, b"retry-after", None), body


def _unknown_test_case_400(
    status: int, headers: Headers, body: bytes
) -> tuple[int, Headers, bytes]:
    if status == 404:
        return (
            400,
            headers,
            json.dumps({"id": "bad_request", "message": "Not a test case id."}).encode(),
        )
    return status, headers, body


def _v1_envelope_on_v2(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes]:
    error = json.loads(body)
    envelope = {
        "error": {"code": error["id"], "message": error["message"], "details": {}, "requestId": "r"}
    }
    return status, headers, json.dumps(envelope).encode()


def _uint64_as_integer(
    scope: Scope, status: int, headers: Headers, body: bytes
) -> tuple[int, Headers, bytes]:
    if status == 200 and scope["path"].startswith("/v2/"):
        answer = json.loads(body)
        test_case = answer["evaluation_test_case"]
        for key in ("created_by_user_id", "updated_by_user_id"):
            if key in test_case:
                test_case[key] = int(test_case[key])
        body = json.dumps(answer).encode()
    return status, headers, body


def _ratelimit_not_integer(
    scope: Scope, status: int, headers: Headers, body: bytes
) -> tuple[int, Headers, bytes]:
    if scope["path"].startswith("/v2/"):
        headers = _set_header(headers, b"ratelimit-remaining", b"plenty")
    return status, headers, body


def _case_insensitive_include(params: dict[str, str]) -> None:
    if "include" in params:
        params["include"] = params["include"].lower()


def _lenient_kind(params: dict[str, str]) -> None:
    if "kind" in params:
        params["kind"] = ",".join(part for part in params["kind"].lower().split(",") if part)


def _any_token(scope: Scope) -> Scope:
    if _header(scope["headers"], b"authorization") not in (
        None,
        b"Bearer demo-user",
        b"Bearer demo-other",
    ):
        scope["headers"] = _set_header(scope["headers"], b"authorization", b"Bearer demo-user")
    return scope


def _upper_case_project_refused(params: dict[str, str]) -> None:
    if params.get("projectId", "") != params.get("projectId", "").lower():
        params["projectId"] = "not-a-uuid"  # which the server refuses with 400 bad-input


def _upper_case_project_elsewhere(params: dict[str, str]) -> None:
    if params.get("projectId", "") != params.get("projectId", "").lower():
        params["projectId"] = (
            "00000000-0000-4000-8000-000000000000"  # no project of the agent: an empty page
        )


def _no_read_reads(scope: Scope) -> Scope:
    if _header(scope["headers"], b"authorization") == b"Bearer demo-no-read":
        scope["headers"] = _set_header(scope["headers"], b"authorization", b"Bearer demo-user")
    return scope


def _refuse_both_kinds(params: dict[str, str]) -> None:
    if set(params.get("kind", "").split(",")) == {"hand", "correction"} and "cursor" not in params:
        params["kind"] += ","  # which the server refuses with 400 bad-input


def _long_tool_on_later_pages(
    scope: Scope, status: int, headers: Headers, body: bytes
) -> tuple[int, Headers, bytes]:
    if status == 200 and _is_list(scope) and "cursor" in _query(scope):
        page = json.loads(body)
        for case in page["data"]:
            case["expect"]["decisions"] = {
                "verdict": "wrong",
                "shouldCall": [{"tool": "t" * 300, "args": {}}],
            }
        body = json.dumps(page).encode()
    return status, headers, body


def _repeated_ranks(case: dict[str, Any]) -> None:
    for item in case["expect"].get("items", []):
        item["rank"] = 0


WALK = ("walk_yields_every_case_once",)
PAGES = ("limit_fills_a_first_page",)
RETIRED = ("include_retired_adds_the_retired_cases",)
PROBES = ("malformed_project_include_or_kind_is_bad_input",)
VERSIONS_BY_NAME = ("version_asked_by_its_inferred_name_is_that_version",)
VERSIONS_BY_SPEC_NAME = ("version_asked_by_the_spec_s_name_is_that_version",)
STRICT, LIVE = Policy(strict=True), Policy(profile=LIVE_PROFILE)

MUTATIONS: list[Mutation] = [
    Mutation(
        "page-overlap",
        "each next page starts with the previous page's last case",
        "walk_yields_every_case_once",
        WALK,
        patch=patch_world(_overlap),
    ),
    Mutation(
        "skipped-case",
        "one case is skipped between consecutive pages",
        "walk_yields_every_case_once",
        ("walk_yields_every_case_once",),
        patch=patch_world(_skip_one),
    ),
    Mutation(
        "kind-ignored",
        "the kind filter is ignored",
        "kind_filter_selects_those_kinds",
        ("kind_filter_selects_those_kinds",),
        patch=patch_world(_all_kinds),
    ),
    Mutation(
        "retired-leak",
        "include is ignored: retired cases are always listed",
        "retired_cases_only_with_include_retired",
        RETIRED,
        patch=patch_world(_always_retired),
    ),
    Mutation(
        "retired-never-shown",
        "include=retired is ignored: retired cases never come back",
        "include_retired_adds_the_retired_cases",
        RETIRED,
        patch=patch_world(_never_retired),
    ),
    Mutation(
        "retired-drops-active",
        "include=retired leaves out an active case",
        "include_retired_adds_the_retired_cases",
        RETIRED,
        patch=patch_world(_retired_drops_active),
    ),
    Mutation(
        "project-ignored",
        "the list holds another project's cases",
        "cases_belong_to_the_project",
        PAGES,
        patch=_patch_other_project,
    ),
    Mutation(
        "default-limit-20",
        f"the default page size is {SHORT_DEFAULT}, not {LIMIT['default']}",
        "default_limit_fills_a_first_page",
        ("default_limit_fills_a_first_page",),
        request=rewrite_query(_default_limit_20),
        policy=STRICT,
    ),
    Mutation(
        "limit-ignored",
        f"limit is ignored (always {LIMIT['default']})",
        "page_holds_at_most_limit",
        PAGES,
        request=rewrite_query(_ignore_limit),
    ),
    Mutation(
        "limit-out-of-range-accepted",
        f"limit={LIMIT['minimum'] - 1} and limit={LIMIT['maximum'] + 1} are taken as the default",
        "limit_outside_its_bounds_is_bad_input",
        ("limit_outside_its_bounds_is_bad_input",),
        request=rewrite_query(_accept_out_of_range_limit),
        policy=STRICT,
    ),
    Mutation(
        "include-letter-case-accepted",
        "include=RETIRED is read as include=retired",
        "malformed_project_include_or_kind_is_bad_input",
        PROBES,
        request=rewrite_query(_case_insensitive_include),
    ),
    Mutation(
        "kind-near-miss-accepted",
        "kind=correction, (a trailing or doubled comma, any case) is accepted",
        "malformed_project_include_or_kind_is_bad_input",
        PROBES,
        request=rewrite_query(_lenient_kind),
    ),
    Mutation(
        "has-more-without-cursor",
        "hasMore is true but nextCursor is missing",
        "has_more_page_has_a_next_cursor",
        PAGES,
        response=on_pages(_drop_cursor_when_more),
    ),
    Mutation(
        "cursor-on-last-page",
        "the last page carries a nextCursor",
        "last_page_has_no_next_cursor",
        WALK,
        response=on_pages(_cursor_on_last_page),
        policy=STRICT,
    ),
    Mutation(
        "oldest-first",
        "pages list the oldest case first",
        "page_is_newest_first",
        PAGES,
        response=on_pages(_oldest_first),
    ),
    Mutation(
        "schema-breach-on-later-pages",
        "pages after the first carry a 300-character tool name",
        "response_schema_conformance",
        WALK,
        response=_long_tool_on_later_pages,
    ),
    Mutation(
        "cursor-not-bound-to-filters",
        "a cursor is taken with other include/kind filters",
        "cursor_is_bound_to_the_filters",
        ("cursor_is_bound_to_the_filters",),
        patch=patch_binding("filters"),
    ),
    Mutation(
        "cursor-not-bound-to-caller",
        "a cursor is taken from another caller",
        "cursor_is_bound_to_the_caller",
        ("cursor_is_bound_to_the_caller",),
        patch=patch_binding("caller"),
    ),
    Mutation(
        "cursor-not-bound-to-agent",
        "a cursor is taken for the same project under another agent (project, filters and "
        "caller still bound)",
        "cursor_is_bound_to_the_agent",
        ("cursor_is_bound_to_the_agent",),
        patch=patch_binding("agent"),
    ),
    Mutation(
        "tampered-cursor-accepted",
        "the cursor's signature is not verified",
        "tampered_cursor_is_bad_input",
        ("tampered_cursor_is_bad_input",),
        patch=patch_open(_position_without_mac),
        policy=STRICT,
    ),
    Mutation(
        "bad-cursor-500",
        "a cursor that does not verify crashes the handler (500)",
        "status_code_conformance",
        ("junk_cursor_is_bad_input",),
        patch=patch_open(_crash),
    ),
    Mutation(
        "missing-request-id",
        "errors lack X-Request-Id",
        "response_headers_conformance",
        PROBES,
        response=on_errors("test-set", _drop_request_id),
    ),
    Mutation(
        "request-id-mismatch",
        "X-Request-Id differs from the envelope's requestId",
        "request_id_header_is_the_envelope_s",
        PROBES,
        response=on_errors("test-set", _other_request_id),
    ),
    Mutation(
        "problem-json-errors",
        "errors answer with problem+json instead of the envelope",
        "content_type_conformance",
        PROBES,
        response=on_errors("test-set", _problem_json),
    ),
    Mutation(
        "auth-not-enforced",
        "a request without a token is served",
        "missing_or_malformed_token_is_401",
        ("missing_or_malformed_token_is_401",),
        request=_no_auth_needed,
    ),
    Mutation(
        "made-up-token-accepted",
        "any well-formed bearer token reads the project",
        "made_up_token_is_refused",
        ("made_up_token_is_refused",),
        request=_any_token,
    ),
    Mutation(
        "expired-token-accepted",
        "expired and revoked tokens still read the project",
        "expired_and_revoked_tokens_are_401",
        ("expired_and_revoked_tokens_are_401",),
        request=_any_token,
    ),
    Mutation(
        "unknown-agent-empty-page",
        "an unknown agent gets a 200 empty page",
        "unknown_agent_is_agent_not_found",
        ("unknown_agent_is_agent_not_found",),
        response=on_errors("test-set", _unknown_agent_empty),
    ),
    Mutation(
        "wrong-404-code",
        "an unknown agent's 404 says not-found instead of agent-not-found",
        "error_code_is_the_page_s",
        ("unknown_agent_is_agent_not_found",),
        response=on_errors("test-set", _not_found_code),
    ),
    Mutation(
        "hand-id-without-case-prefix",
        "hand case ids start hand- instead of case-",
        "hand_case_id_starts_with_case",
        PAGES,
        response=on_cases(_hand_id),
    ),
    Mutation(
        "updated-at-moves",
        "an active case's updatedAt differs from its addedAt",
        "updated_at_is_added_at_until_retired",
        PAGES,
        response=on_cases(_touch_updated_at),
    ),
    Mutation(
        "expert-missing-on-hand",
        "hand cases lose expert: true",
        "hand_cases_are_expert",
        WALK,
        response=on_cases(_drop_expert_on_hand),
    ),
    Mutation(
        "item-ranks-repeated",
        "every item of a case has rank 0",
        "item_ranks_are_distinct_positions",
        WALK,
        response=on_cases(_repeated_ranks),
    ),
    Mutation(
        "args-too-long",
        "shouldCall args exceed 4000 characters",
        "should_call_args_fit",
        PAGES,
        response=on_cases(_long_args),
    ),
    Mutation(
        "retired-before-added",
        "a retirement dated before the case was added",
        "retirement_is_consistent",
        RETIRED,
        response=on_cases(_retired_before_added),
        policy=STRICT,
    ),
    Mutation(
        "busy-without-retry-after",
        "a 503 database-busy lacks Retry-After",
        "busy_answer_says_when_to_retry",
        ("busy_answer_says_when_to_retry",),
        response=on_errors("test-set", _drop_retry_after),
    ),
    Mutation(
        "v2-version-ignored",
        "the version parameter is ignored (always the latest): it may be read under "
        "another name, since evaluation_test_case_version is inferred",
        VERSIONS_BY_NAME[0],
        VERSIONS_BY_NAME,
        api="gradient",
        request=rewrite_query(_drop_version),
        policy=STRICT,
    ),
    Mutation(
        "v2-uint64-as-integer",
        "uint64 fields travel as JSON numbers",
        "response_schema_conformance",
        ("each_version_is_that_version",),
        api="gradient",
        response=_uint64_as_integer,
    ),
    Mutation(
        "v2-ratelimit-not-integer",
        "ratelimit-remaining is a word",
        "conforms_to_digitalocean_s_spec",
        ("no_version_is_the_latest",),
        api="gradient",
        response=_ratelimit_not_integer,
        policy=LIVE,
    ),
    Mutation(
        "v2-v1-envelope",
        "/v2 errors use the test-set envelope",
        "conforms_to_digitalocean_s_spec",
        ("unknown_test_case_is_404",),
        api="gradient",
        response=on_errors("gradient", _v1_envelope_on_v2),
        policy=LIVE,
    ),
    Mutation(
        "v2-unknown-is-400",
        "an unknown test case id is a 400, not a 404",
        "unknown_test_case_is_404",
        ("unknown_test_case_is_404",),
        api="gradient",
        response=on_errors("gradient", _unknown_test_case_400),
        policy=LIVE,
    ),
    Mutation(
        "walk-ends-on-page-2-at-the-default-limit",
        "at the default limit the second page says it is the last (hasMore: false, no nextCursor): "
        f"{2 * LIMIT['default']} cases delivered, the third page never asked for",
        "walk_yields_every_case_once",
        WALK,
        patch=patch_world(_ends_early(lambda limit: limit == LIMIT["default"], 2)),
    ),
    Mutation(
        "walk-ends-on-page-4-at-a-small-limit",
        "at a limit below 50 the fourth page says it is the last",
        "walk_yields_every_case_once",
        WALK,
        patch=patch_world(_ends_early(lambda limit: limit < 50 and limit != LIMIT["default"], 4)),
    ),
    Mutation(
        "v2-version-off-by-one",
        "asked for version n > 1, the answer is version n - 1 (the parameter is "
        "read, so its name is confirmed)",
        "each_version_is_that_version",
        ("each_version_is_that_version",),
        api="gradient",
        request=rewrite_query(_version_off_by_one),
    ),
    Mutation(
        "no-read-caller-served",
        "a valid token without read on the project (the targets' no_read_token) "
        "is served the project's cases",
        "caller_without_read_gets_no_cases",
        ("caller_without_read_gets_no_cases",),
        request=_no_read_reads,
    ),
    Mutation(
        "both-kinds-refused",
        "a valid kind=hand,correction (either order, no cursor) is refused with 400",
        "kind_filter_selects_those_kinds",
        ("kind_filter_selects_those_kinds",),
        request=rewrite_query(_refuse_both_kinds),
    ),
    Mutation(
        "upper-case-project-id-refused",
        "a project id in upper case (as the page's own request spells it) is refused with 400",
        "upper_case_project_id_is_accepted",
        ("upper_case_project_id_is_accepted",),
        request=rewrite_query(_upper_case_project_refused),
    ),
    Mutation(
        "upper-case-project-id-is-another-project",
        "a project id in upper case names no project (an empty "
        "page): RFC 4122's case-insensitivity, not the page's",
        "project_id_is_case_insensitive",
        ("project_id_is_case_insensitive",),
        request=rewrite_query(_upper_case_project_elsewhere),
        policy=STRICT,
    ),
    Mutation(
        "envelope-without-request-id",
        "error envelopes lack requestId (X-Request-Id is still sent)",
        "response_schema_conformance",
        PROBES,
        response=on_errors("test-set", _no_envelope_request_id),
    ),
    Mutation(
        "v2-version-ignored-live",
        "the version parameter is ignored (always the latest), judged in the live "
        "profile, where DigitalOcean's spec names the parameter",
        VERSIONS_BY_SPEC_NAME[0],
        VERSIONS_BY_SPEC_NAME,
        api="gradient",
        request=rewrite_query(_drop_version),
        policy=LIVE,
    ),
    Mutation(
        "v2-malformed-version-ignored",
        "a version that is no whole number (x, 1.5) is ignored: a 200 with the latest",
        "version_that_is_no_integer_is_400",
        ("version_that_is_no_integer_is_400",),
        api="gradient",
        request=rewrite_query(_drop_malformed_version),
        policy=STRICT,
    ),
    # Its check registers only while the document declares a filter without a rule of its own, as
    # a revision of the page may (tests/revised_documents.py): planted then, with the check.
    *(
        [
            Mutation(
                "filter-without-a-rule-ignored",
                "a filter the document declares without a rule of its own is ignored",
                "cases_match_the_other_filters",
                ("other_filters_narrow_the_walk",),
                request=rewrite_query(_drop_filters_without_a_rule),
                policy=STRICT,
            )
        ]
        if UNRULED
        else []
    ),
]
