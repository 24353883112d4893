"""A redirect is never followed to another origin: an answer that sends the audit elsewhere (another
port, so another origin) gets no request from it, so no token, cookie or key of the audit reaches
another origin. Within the origin, a loop ends after a few hops and is named once."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.fuzzing import redirect_loop
from evalmock.harness.run.options import Audit
from evalmock.harness.run.schemathesis_schema import MAX_REDIRECTS

from .conftest import MutableServer
from .mutants import Mutation
from .serving import serving

CREDENTIALS = (b"authorization", b"cookie", b"x-api-key")


def test_no_redirect_is_followed_so_no_credential_reaches_another_origin(
    mutable_server: MutableServer,
) -> None:
    reached: list[list[tuple[bytes, bytes]]] = []  # what the other origin received

    async def elsewhere(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            reached.append([(k, v) for k, v in scope["headers"] if k in CREDENTIALS])
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

    with serving(elsewhere) as other:

        def redirect(scope: dict[str, Any], status: int, headers: Any, body: bytes) -> Any:
            query = scope.get("query_string", b"")
            if b"cursor=" not in query:  # the first pages answer; every next page is elsewhere
                return status, headers, body
            location = f"{other}{scope['path']}?{query.decode()}".encode()
            return 307, [(b"location", location), (b"content-length", b"0")], b""

        mutable_server.switch.mutation = Mutation(
            "redirect", "every next page redirected elsewhere", "", (), response=redirect
        )
        try:
            results = run_audit(
                Audit(
                    base_url=mutable_server.base_url,
                    targets=mutable_server.targets,
                    apis=("test-set",),
                    token=mutable_server.targets.token,
                    fuzz=True,
                    max_examples=3,
                    only=frozenset({"walk_yields_every_case_once"}),
                    policy=Policy(),
                )
            )
        finally:
            mutable_server.switch.mutation = None
    assert reached == []  # not one request, so not one credential
    assert results.verdict is not Verdict.CONFORMS  # a walk cut by a redirect is no pass


def test_a_redirect_loop_within_the_origin_stops_after_a_few_hops_and_is_named_once(
    mutable_server: MutableServer,
) -> None:
    hops: dict[str, list[int]] = {"schemathesis": [], "httpx": []}  # per client, each hop it sent

    def loop(scope: dict[str, Any], status: int, headers: Any, body: bytes) -> Any:
        if "/test-set/cases" not in scope["path"]:
            return status, headers, body
        query = scope["query_string"].decode()
        agent = dict(scope["headers"]).get(b"user-agent", b"").decode()
        hop = int(parse_qs(query).get("hop", ["0"])[-1])
        hops["httpx" if "httpx" in agent else "schemathesis"].append(hop)
        # the same URL, but for the hop's count
        location = f"{mutable_server.base_url}{scope['path']}?{query}&hop={hop + 1}"
        return 307, [(b"location", location.encode())], b""

    mutable_server.switch.mutation = Mutation("loop", "redirects to itself", "", (), response=loop)
    try:
        results = run_audit(
            Audit(
                base_url=mutable_server.base_url,
                targets=mutable_server.targets,
                apis=("test-set",),
                token=mutable_server.targets.token,
                max_examples=2,
                phases=("examples",),
                only=frozenset({"limit_fills_a_first_page"}),
                policy=Policy(),
            )
        )
    finally:
        mutable_server.switch.mutation = None
    assert max(hops["schemathesis"]) == MAX_REDIRECTS == 5  # not requests' 30
    assert max(hops["httpx"]) == 0  # the scenario checks follow none: the 307 is the answer
    loops = {gap.what for gap in results.gaps if "redirects" in gap.what}
    assert loops == {redirect_loop("GET /agents/{agentId}/test-set/cases")}  # named once
    assert results.verdict is not Verdict.CONFORMS
