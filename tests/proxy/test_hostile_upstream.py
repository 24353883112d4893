"""An upstream the auditor does not trust: its bytes reach the proxy's console escaped (it cannot
clear the screen, retitle the window or overwrite a line), and a redirect it answers is forwarded,
never followed, so no credential goes to another origin."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness.serving import serving

from .conftest import ProxyFactory

PATH = "/v1/agents/acme.drafting/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
HOSTILE = "\x1b]0;CONFORMS\x07\x1b[2J\rOK \x9b"


async def refusal(request: Request) -> JSONResponse:
    """A 404 for any agent, whose error code is a terminal's escape sequences."""
    envelope = {"code": HOSTILE, "message": HOSTILE, "details": {}, "requestId": "r-1"}
    return JSONResponse({"error": envelope}, 404, headers={"X-Request-Id": "r-1"})


def test_control_characters_from_the_upstream_are_escaped_on_the_console(
    proxy_for: ProxyFactory,
) -> None:
    upstream = Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", refusal)])
    with serving(upstream) as base_url, proxy_for(base_url) as proxy:
        path = (
            "/v1/agents/acme.drafting/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
        )
        answer = httpx.get(proxy.base_url + path, headers={"Authorization": "Bearer t"})
        said = proxy.stream.getvalue()
    assert answer.status_code == 404
    assert "\\x1b]0;CONFORMS\\x07" in said  # the breach was told, its bytes shown escaped
    assert not any((ord(char) < 32 and char != "\n") or 0x7F <= ord(char) <= 0x9F for char in said)


def test_the_proxy_forwards_a_redirect_as_it_came_and_follows_none(
    proxy_for: ProxyFactory,
) -> None:
    reached: list[str] = []

    async def elsewhere(request: Request) -> JSONResponse:
        reached.append(request.headers.get("authorization", ""))
        return JSONResponse({})

    other_app = Starlette(routes=[Route("/{path:path}", elsewhere)])
    with serving(other_app) as other:

        async def redirect(request: Request) -> Response:
            return Response(status_code=307, headers={"Location": f"{other}{request.url.path}"})

        upstream = Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", redirect)])
        with serving(upstream) as base_url, proxy_for(base_url) as proxy:
            answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer s3cret"})
    assert (answer.status_code, answer.headers["location"]) == (307, f"{other}{PATH.split('?')[0]}")
    assert reached == []  # the proxy did not go there, so neither did the token
