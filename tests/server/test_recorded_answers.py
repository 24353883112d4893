"""The server answers a fixed transcript exactly as recorded: status, the headers that matter and
body bytes.

`recorded_answers.json` holds each answer of the transcript below (a body as text when short, else
its sha256 and length). It pins the served bytes for a seed, so a change on the request path that
alters an answer, even by one byte or header, fails here. To record it again after an intended
change of answers: EVALMOCK_RECORD_ANSWERS=1 python -m pytest tests/server/test_recorded_answers.py
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from evalmock.world.gradient import EXAMPLE_TEST_CASE

from .helpers import FrozenClock, cases_path, evaluation_path

RECORDED = Path(__file__).with_name("recorded_answers.json")
RECORD = os.environ.get("EVALMOCK_RECORD_ANSWERS") == "1"
INLINE_BODY_LIMIT = 600
# Headers whose values depend on the wall clock (the rate-limit window) or on a fresh random id.
_COUNTED = {"ratelimit-remaining", "ratelimit-reset"}
_GENERATED_ID = re.compile(r"[0-9a-f]{32}")
SEED = 42
CASES = 300

Step = tuple[str, str, dict[str, Any], dict[str, str]]  # method, path, query, headers


def _headers(
    token: str | None = "demo-user", request_id: str | None = "", **extra: str
) -> dict[str, str]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if request_id is not None:
        headers["X-Request-Id"] = request_id
    return {**headers, **extra}


def _list(agent: str = EXAMPLE_AGENT, **query: Any) -> tuple[str, dict[str, Any]]:
    return cases_path(agent), {"projectId": EXAMPLE_PROJECT, **query}


class Transcript:
    """Runs requests in order, numbering them and keeping what a later request needs (cursors)."""

    def __init__(self, client: httpx.Client, clock: FrozenClock) -> None:
        self.client = client
        self.clock = clock
        self.answers: list[dict[str, Any]] = []

    def get(
        self,
        path: str,
        query: dict[str, Any] | None = None,
        method: str = "GET",
        content: bytes | None = None,
        **headers: Any,
    ) -> httpx.Response:
        number = len(self.answers)
        sent = _headers(**headers)
        if sent.get("X-Request-Id") == "":
            sent["X-Request-Id"] = f"recorded-{number}"
        response = self.client.request(
            method, path, params=query, headers=sent, content=content, follow_redirects=False
        )
        self.answers.append(_answer(number, method, path, query, sent, response))
        return response

    def walk(
        self, agent: str, query: dict[str, Any], pages: int, token: str = "demo-user"
    ) -> list[str]:
        """Follow nextCursor for up to `pages` pages; the cursors seen, in order."""
        cursors: list[str] = []
        for _ in range(pages):
            step = {**query, **({"cursor": cursors[-1]} if cursors else {})}
            body = self.get(cases_path(agent), step, token=token).json()
            if "nextCursor" not in body:
                break
            cursors.append(body["nextCursor"])
        return cursors


def _answer(
    number: int,
    method: str,
    path: str,
    query: dict[str, Any] | None,
    sent: dict[str, str],
    response: httpx.Response,
) -> dict[str, Any]:
    body = response.content
    generated = None if "X-Request-Id" in sent else response.headers.get("x-request-id")
    if generated:
        assert _GENERATED_ID.fullmatch(generated), generated
        body = body.replace(generated.encode(), b"<generated>")
    headers = []
    for name, value in response.headers.multi_items():
        if name in _COUNTED:
            assert value.isdigit(), (name, value)
            value = "<counted>"
        elif generated and value == generated:
            value = "<generated>"
        headers.append([name, value])
    shown = (
        body.decode()
        if len(body) <= INLINE_BODY_LIMIT
        else f"sha256:{hashlib.sha256(body).hexdigest()} ({len(body)} bytes)"
    )
    request = f"{method} {path}" + (f"?{httpx.QueryParams(query)}" if query else "")
    return {
        "n": number,
        "request": request,
        "sent": sent,
        "status": response.status_code,
        "headers": sorted(headers),
        "body": shown,
    }


def list_transcript(t: Transcript, world: World) -> None:
    """Pages, filters, walks with cursors, every kind of bad input, auth errors and Prefer controls
    on /v1."""
    path, query = _list(include="retired", limit=25)
    t.get(path, query)  # the reference page's own request
    t.get(path, query, request_id=None)  # an id of the server's own
    t.get(path, {**query, "projectId": EXAMPLE_PROJECT.upper()})
    for agent in world.agent_ids():
        for project in world.project_ids(agent)[:2]:
            t.get(cases_path(agent), {"projectId": project})
    for extra in (
        {"kind": "hand"},
        {"kind": "correction"},
        {"kind": "correction,hand", "include": "retired"},
        {"kind": "hand,hand"},
        {"limit": 1},
        {"limit": 100},
        {"limit": "007"},
        {"include": "retired", "kind": "hand", "limit": 3},
    ):
        t.get(*_list(**extra))
    t.get(*_list(limit=10), token="demo-service")
    t.get(*_list(limit=10), token="demo-other")
    # Walks, following each page's cursor; a cursor is bound to its list, filters and caller, and a
    # day.
    cursors = t.walk(EXAMPLE_AGENT, {"projectId": EXAMPLE_PROJECT, "limit": 40}, pages=9)
    t.walk(
        EXAMPLE_AGENT,
        {"projectId": EXAMPLE_PROJECT, "include": "retired", "kind": "hand", "limit": 7},
        pages=4,
    )
    other_agent = world.agent_ids()[1]
    t.walk(
        other_agent,
        {"projectId": world.project_ids(other_agent)[0], "limit": 50},
        pages=3,
        token="demo-service",
    )
    t.get(*_list(limit=5, cursor=cursors[0]))  # another page size keeps the cursor valid
    t.get(*_list(limit=40, cursor=cursors[0]), token="demo-other")
    t.get(*_list(limit=40, cursor=cursors[0], kind="hand"))
    t.get(*_list(limit=40, cursor=cursors[0][:-2] + "AA"))
    t.get(*_list(limit=40, cursor="not-a-cursor"))
    t.get(*_list(limit=40, cursor=""))
    t.clock.advance(24 * 3600 + 1)
    t.get(*_list(limit=40, cursor=cursors[1]))  # expired
    t.clock.advance(-(24 * 3600 + 1))
    # Bad input, one parameter at a time.
    for bad in (
        {"projectId": "not-a-uuid"},
        {"projectId": ""},
        {"projectId": EXAMPLE_PROJECT + "\n"},
        {"limit": 0},
        {"limit": 101},
        {"limit": "abc"},
        {"limit": "1.5"},
        {"limit": ""},
        {"include": "all"},
        {"kind": "hand,"},
        {"kind": "other"},
        {"limt": 10},
        {"cursor": "x" * 300},
    ):
        t.get(*_list(**bad))
    t.get(cases_path(), {"limit": 10})  # projectId missing
    t.get(cases_path() + f"?projectId={EXAMPLE_PROJECT}&limit=5&limit=6")
    t.get(
        cases_path()
        + "?"
        + "&".join(f"p{i}=1" for i in range(70))
        + f"&projectId={EXAMPLE_PROJECT}"
    )
    t.get(*_list(), content=b"{}")  # a body on a GET
    # Who asks: no token, other schemes, the demo 401s, malformed tokens.
    for token_headers in (
        {"token": None},
        {"token": None, "Authorization": "Basic abc"},
        {"token": "demo-expired"},
        {"token": "demo-revoked"},
        {"token": None, "Authorization": "Bearer "},
        {"token": None, "Authorization": "Bearer a b"},
    ):
        t.get(*_list(), **token_headers)
    # Agents and projects that are not there.
    t.get(*_list(agent="no.such.agent"))
    t.get(*_list(agent="x" * 200))
    t.get(cases_path(EXAMPLE_AGENT), {"projectId": world.project_ids(world.agent_ids()[1])[0]})
    t.get(
        cases_path(EXAMPLE_AGENT),
        {"projectId": "00000000-0000-0000-0000-000000000000", "cursor": cursors[0]},
    )
    t.get("/v1/agents/a%0Ab/test-set/cases", {"projectId": EXAMPLE_PROJECT})
    t.get("/v1/agents/a%2Fb/test-set/cases", {"projectId": EXAMPLE_PROJECT})
    t.get("/v1/agents/example/test-set/nothing")
    t.get("/nothing")
    t.get(*_list(), method="POST")
    t.get(*_list(), method="HEAD")
    # Prefer: forced statuses and named examples, refused choices, delays of zero.
    for value in (
        "code=200",
        "code=400",
        "code=401",
        "code=404",
        "code=503",
        "example=page",
        "example=retired",
        "example=empty",
        "code=200, example=page",
        "code=400, example=bad-cursor",
        "code=503, example=database-busy",
        "code=418",
        "code=200, example=nope",
        "example=",
        "code=abc",
        "delay=0",
        "delay=0, code=404",
        "return=minimal",
        'example="page"; q=1',
    ):
        t.get(*_list(), Prefer=value)
    t.get(*_list(agent="no.such.agent"), Prefer="example=page")
    t.get(*_list(limit=0), Prefer="code=503")
    t.get(*_list(), token=None, Prefer="code=503")
    # The documents and Swagger UI, beside the operations.
    for path in (
        "/v1/openapi.json",
        "/v2/openapi.yaml",
        "/v1/ui/",
        "/v2/ui",
        "/v1/ui/swagger-ui-config.json",
        "/v1/ui/nothing.js",
        "/v1/openapi.json/",
    ):
        t.get(path)
    t.get(cases_path() + "/", {"projectId": EXAMPLE_PROJECT})
    # CORS: a simple request from a page, and a preflight.
    t.get(*_list(), Origin="http://localhost:3000")
    t.get(
        cases_path(),
        method="OPTIONS",
        token=None,
        Origin="http://localhost:3000",
        **{
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization,prefer",
        },
    )


def gradient_transcript(t: Transcript, world: World) -> None:
    """Every test case and version on /v2, unknown ones, bad versions, auth errors and Prefer
    controls."""
    for uuid, versions in world.evaluation_test_case_versions().items():
        t.get(evaluation_path(uuid))
        for version in versions:
            t.get(evaluation_path(uuid), {"evaluation_test_case_version": version})
    t.get(evaluation_path(), request_id=None)
    t.get(evaluation_path(EXAMPLE_TEST_CASE.upper()))
    for version in (0, 4, 99, "abc", "", "-1", "1.0"):
        t.get(evaluation_path(), {"evaluation_test_case_version": version})
    t.get(evaluation_path("00000000-0000-0000-0000-000000000000"))
    t.get(evaluation_path("not a uuid"))
    t.get(evaluation_path(), {"other": 1})
    t.get(evaluation_path(), token=None)
    t.get(evaluation_path(), token="demo-expired")
    for value in (
        "code=429",
        "code=404",
        "code=500",
        "code=401",
        "example=reference",
        "code=200",
        "code=418",
        "example=nope",
    ):
        t.get(evaluation_path(), Prefer=value)
    t.get("/v2/gen-ai/nothing")
    t.get(evaluation_path(), method="POST")
    t.get(evaluation_path(), Origin="http://localhost:3000")


def transcript(client: httpx.Client, clock: FrozenClock, world: World) -> list[dict[str, Any]]:
    t = Transcript(client, clock)
    list_transcript(t, world)
    gradient_transcript(t, world)
    return t.answers


def short_transcript(
    client: httpx.Client, clock: FrozenClock, world: World
) -> list[dict[str, Any]]:
    """Requests whose answers a server setting changes: unknown parameters, CORS, the error rate."""
    t = Transcript(client, clock)
    t.get(*_list(limt=10))
    t.get(evaluation_path(), {"other": 1})
    t.get(*_list(), Origin="http://localhost:3000")
    for _ in range(12):
        t.get(*_list(limit=3))
        t.get(evaluation_path())
    t.get(*_list(), Prefer="code=200")
    return t.answers


# Settings -> which transcript; every server runs with a frozen cursor clock on a fresh world of one
# seed.
SERVERS: dict[str, tuple[dict[str, Any], Callable[..., list[dict[str, Any]]]]] = {
    "default": ({}, transcript),
    "validate-responses": ({"validate_responses": True}, transcript),
    "latency": ({"latency_ms": (1, 2)}, short_transcript),
    "allow-unknown-params": ({"strict_validation": False}, short_transcript),
    "no-cors": ({"cors": False}, short_transcript),
    "error-rate": ({"error_rate": 0.5}, short_transcript),
}
# Response validation never changes an answer, so both servers answer the one recorded transcript.
RECORDED_AS = {"validate-responses": "default"}


def answers_of(make_client: Callable[..., httpx.Client], name: str) -> list[dict[str, Any]]:
    settings, run = SERVERS[name]
    world = World(seed=SEED, cases=CASES)
    clock = FrozenClock()
    client = make_client(
        world=world,
        clock=clock,
        seed=SEED,
        cases=CASES,
        **{"validate_responses": False, **settings},
    )
    return run(client, clock, world)


def _recorded() -> dict[str, list[dict[str, Any]]]:
    return json.loads(RECORDED.read_text(encoding="utf-8")) if RECORDED.exists() else {}


@pytest.fixture(scope="module")
def recorded() -> Iterator[dict[str, list[dict[str, Any]]]]:
    answers = _recorded()
    yield answers
    if RECORD:
        RECORDED.write_text(_dumps(answers), encoding="utf-8")


def _dumps(answers: dict[str, list[dict[str, Any]]]) -> str:
    """One answer per line, so that a changed answer shows as one changed line."""
    servers = [
        f"{json.dumps(name)}: [\n"
        + ",\n".join(json.dumps(a, ensure_ascii=False) for a in rows)
        + "\n]"
        for name, rows in answers.items()
    ]
    return "{\n" + ",\n".join(servers) + "\n}\n"


@pytest.mark.parametrize("name", list(SERVERS))
def test_answers_are_the_recorded_ones(
    make_client: Callable[..., httpx.Client], recorded: dict[str, list[dict[str, Any]]], name: str
) -> None:
    answers = answers_of(make_client, name)
    key = RECORDED_AS.get(name, name)
    if RECORD and name not in RECORDED_AS:
        recorded[key] = answers
        pytest.skip(f"recorded {len(answers)} answers for {name}")
    expected = recorded[key]
    assert len(answers) == len(expected)
    for got, want in zip(answers, expected, strict=True):
        assert got == want, f"answer {got['n']} ({got['request']}) changed"
