"""A redirect is never followed: an answer that sends the audit elsewhere (another port, so another
origin) gets no request from it, so no token, cookie or key of the audit reaches another origin."""

from __future__ import annotations

from typing import Any

from evalmock.harness.checks.policy import Policy
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit

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
