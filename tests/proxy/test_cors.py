"""CORS through the proxy: an upstream's own CORS answer (an app that sends cookies to a service
allowing its origin with credentials) reaches the browser as it came, preflight included, with the
violations header exposed; an upstream that answers no CORS gets `evalmock serve`'s."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.middleware.cors import CORSMiddleware

from evalmock.proxy.violations import HEADER
from harness.serving import serving

from .conftest import ProxyFactory
from .upstreams import broken_upstream

ORIGIN = "http://localhost:5173"  # the app's dev server
CASES = "/v1/agents/{agent}/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "GET",
    "Access-Control-Request-Headers": "authorization",
}
CREDENTIALED = {"Origin": ORIGIN, "Cookie": "session=abc", "Authorization": "Bearer demo-user"}


@pytest.fixture(scope="module")
def credentialed_service() -> Iterator[str]:
    """The broken service behind a CORS policy of its own: the app's origin only, with
    credentials."""
    app = CORSMiddleware(
        broken_upstream(),
        allow_origins=[ORIGIN],
        allow_credentials=True,
        allow_methods=["GET"],
        allow_headers=["authorization"],
        expose_headers=["X-Request-Id"],
    )
    with serving(app) as base_url:
        yield base_url


def exposed(response: httpx.Response) -> set[str]:
    return {
        name.strip().lower()
        for name in response.headers.get("access-control-expose-headers", "").split(",")
    }


def test_a_credentialed_request_gets_the_upstreams_cors_with_the_violations_header_exposed(
    credentialed_service: str, proxy_for: ProxyFactory
) -> None:
    with proxy_for(credentialed_service, "--api", "test-set") as proxy:
        for agent, broken in (("conforming", False), ("too-long", True)):
            response = httpx.get(proxy.base_url + CASES.format(agent=agent), headers=CREDENTIALED)
            # not `*`: a browser refuses it here
            assert response.headers["access-control-allow-origin"] == ORIGIN
            assert response.headers["access-control-allow-credentials"] == "true"
            assert exposed(response) == {"x-request-id", HEADER}
            assert (HEADER in response.headers) is broken


def test_a_preflight_is_the_upstreams_when_it_answers_one(
    credentialed_service: str, proxy_for: ProxyFactory
) -> None:
    with proxy_for(credentialed_service, "--api", "test-set") as proxy:
        response = httpx.options(
            proxy.base_url + CASES.format(agent="conforming"), headers=PREFLIGHT
        )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert response.headers["access-control-allow-credentials"] == "true"
    assert "authorization" in response.headers["access-control-allow-headers"].lower()


def test_an_upstream_without_cors_gets_evalmock_serves(
    broken: str, proxy_for: ProxyFactory
) -> None:
    with proxy_for(broken, "--api", "test-set") as proxy:
        response = httpx.get(
            proxy.base_url + CASES.format(agent="too-long"), headers={"Origin": ORIGIN}
        )
        preflight = httpx.options(
            proxy.base_url + CASES.format(agent="conforming"), headers=PREFLIGHT
        )
    assert response.headers["access-control-allow-origin"] == "*"
    assert HEADER in exposed(response) and HEADER in response.headers
    assert response.headers.get_list("vary") == ["Origin"]
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == "*"
