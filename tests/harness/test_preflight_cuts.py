"""The pre-flight's answers are read as every other answer of the audit is: one cut at a limit (a
bomb, a body shorter than its Content-Length, a header block of a megabyte) leaves the audit
INCOMPLETE with the reason, never CONFORMS with nothing named. The service answers every other
request as our mock does."""

from __future__ import annotations

from typing import Any

import pytest

from evalmock.exits import INCOMPLETE
from evalmock.harness.run.preflight import MADE_UP_UUID

from .serving import serving
from .test_hostile_answers import ONE_REQUEST, audit_in_a_process, gzip_bomb
from .test_hostile_answers import sent_whole as whole
from .test_hostile_schemathesis import Mock, answering, mock  # noqa: F401  (a fixture)

MiB = 2**20


class PreflightAttacker:
    """Our mock, but the pre-flight's request for a made-up resource is answered by `attack`."""

    def __init__(self, app: Any, attack: Any) -> None:
        self.app, self.attack, self.attacked = app, attack, 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and MADE_UP_UUID in scope["path"]:
            self.attacked += 1
            return await self.attack(scope, receive, send)
        return await self.app(scope, receive, send)


async def lying_length(scope: dict[str, Any], receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"100000")]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": b'{"error": {}}'})


async def a_megabyte_of_header(scope: dict[str, Any], receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"application/json"), (b"x-padding", b"a" * MiB)]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})


ATTACKS = {
    "a gzip bomb": (
        answering([(b"content-encoding", b"gzip")], whole(gzip_bomb(1))),
        "its body passed 16 MiB decoded",
    ),
    "a lying Content-Length": (lying_length, "got no answer read whole"),
    "a header block of a megabyte": (a_megabyte_of_header, "got no answer read whole"),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_cut_answer_to_the_pre_flight_leaves_the_audit_incomplete_naming_it(
    mock: Mock,  # noqa: F811
    attack: str,
) -> None:
    app, said = ATTACKS[attack]
    attacker = PreflightAttacker(mock.app, app)
    with serving(attacker) as base_url:
        report, _ = audit_in_a_process(base_url, mock.targets, only=[ONE_REQUEST], token=None)
    assert attacker.attacked >= 1
    assert report["exit"] == INCOMPLETE, report
    named = [gap for gap in report["gaps"] if "the pre-flight's GET" in gap]
    assert named and any(said in gap for gap in named), report["gaps"]
    assert MADE_UP_UUID in named[0]
