"""In front of `evalmock serve`, a browser-like session (pages walked with cursors, filters, errors
forced with Prefer, both APIs) passes through byte for byte, breaks no rule, and every page rule of
both APIs is checked."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from evalmock.contract.operations import operation
from evalmock.contract.targets import load_targets
from evalmock.harness.results.verdict import Verdict
from evalmock.proxy.violations import HEADER
from harness.serving import serving

from .conftest import ProxyFactory, RecordedServe, RunningProxy
from .upstreams import TEST_ID

ORIGIN = "http://localhost:5173"  # a frontend's dev server
CORS_SET = {
    b"access-control-allow-origin",
    b"access-control-expose-headers",
    b"access-control-allow-credentials",
}
ADDED_BY_THE_SERVER = {b"date", b"server"}  # by the uvicorn that serves the recorded app


def _proxy_before(
    recorded_serve: RecordedServe, proxy_for: ProxyFactory
) -> AbstractContextManager[RunningProxy]:
    return proxy_for(recorded_serve.base_url, "--targets", str(recorded_serve.targets_path))


@pytest.fixture(scope="module")
def proxy(recorded_serve: RecordedServe, proxy_for: ProxyFactory) -> Iterator[RunningProxy]:
    with _proxy_before(recorded_serve, proxy_for) as running:
        yield running


class Browser:
    """A frontend's fetches through the proxy; each answer is compared with what the upstream app
    sent."""

    def __init__(self, proxy: RunningProxy, upstream: RecordedServe) -> None:
        self.client = httpx.Client(base_url=proxy.base_url, headers={"Origin": ORIGIN}, timeout=30)
        self.upstream = upstream
        self.answers = 0

    def get(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        token: str | None = "demo-user",
        **headers: str,
    ) -> httpx.Response:
        test_id = uuid.uuid4().hex
        sent_headers = {TEST_ID: test_id, **headers}
        if token:
            sent_headers["Authorization"] = f"Bearer {token}"
        response = self.client.get(path, params=params, headers=sent_headers)
        sent = self.upstream.recording.sent[test_id]
        assert (b"authorization", f"Bearer {token}".encode()) in sent.request_headers or not token
        assert response.status_code == sent.status
        assert response.content == sent.body
        assert _without(response.headers.raw, CORS_SET | ADDED_BY_THE_SERVER) == _without(
            sent.headers, CORS_SET
        )
        assert sorted(
            name.lower() for name, _ in response.headers.raw if name.lower() in ADDED_BY_THE_SERVER
        ) == [b"date", b"server"]  # the upstream's, once
        assert response.headers["access-control-allow-origin"] == "*"
        assert HEADER not in response.headers, response.headers[HEADER]
        self.answers += 1
        return response


def _without(headers: list[tuple[bytes, bytes]], names: set[bytes]) -> list[tuple[bytes, bytes]]:
    return [(name.lower(), value) for name, value in headers if name.lower() not in names]


def test_a_browser_session_passes_through_byte_for_byte_and_breaks_no_rule(
    recorded_serve: RecordedServe, proxy_for: ProxyFactory
) -> None:
    # a proxy of its own: what it judged is this session's traffic, whichever tests ran before
    with _proxy_before(recorded_serve, proxy_for) as proxy:
        _browse_and_judge(proxy, recorded_serve)


def _browse_and_judge(proxy: RunningProxy, recorded_serve: RecordedServe) -> None:
    targets = load_targets(recorded_serve.targets_path)
    project = next(p for p in targets.projects if p.has_retired and p.has_hand)
    test_case = targets.test_cases[0]
    browser = Browser(proxy, recorded_serve)
    cases = operation("test-set").url_path(agentId=project.agent_id)
    walked = {"projectId": project.project_id, "include": "retired", "limit": "40"}

    page = browser.get(cases, walked).json()
    pages = 1
    while page["hasMore"]:
        page = browser.get(cases, {**walked, "cursor": page["nextCursor"]}).json()
        pages += 1
    browser.get(cases, {"projectId": project.project_id, "kind": "hand"})
    browser.get(
        cases, {"projectId": project.project_id.upper(), "kind": "correction,hand", "limit": "100"}
    )
    for prefer in ("code=400", "code=401", "code=404", "code=503", "example=empty"):
        browser.get(cases, {"projectId": project.project_id}, Prefer=prefer)
    browser.get(cases, {"projectId": project.project_id}, token=None)
    browser.get(
        operation("test-set").url_path(agentId="no.such-agent"), {"projectId": project.project_id}
    )
    browser.get(cases, {"projectId": "not-a-uuid"})

    document = operation("gradient").url_path(test_case_uuid=test_case.uuid)
    browser.get(document)
    for version in test_case.versions:
        browser.get(document, {"evaluation_test_case_version": str(version)})
    for prefer in ("code=404", "code=429"):
        browser.get(document, Prefer=prefer)

    results = proxy.session.results()
    assert pages > 2
    assert not results.failures and not results.warnings, [f.check.name for f in results.findings]
    assert results.verdict is Verdict.CONFORMS
    assert not [line for line in proxy.lines() if "FAILED" in line or "WARNING" in line]
    assert proxy.session.audit.judged == browser.answers


def test_the_request_reaches_the_upstream_as_it_came(
    proxy: RunningProxy, recorded_serve: RecordedServe
) -> None:
    test_id = uuid.uuid4().hex
    path = "/v1/agents/ex%61mple/test-set/cases"  # percent-encoded as sent
    query = "projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&limit=2&limit=3"
    httpx.get(
        f"{proxy.base_url}{path}?{query}",
        headers={
            TEST_ID: test_id,
            "X-Custom": "kept",
            "Connection": "close",
            "Authorization": "Bearer demo-user",
        },
    )
    sent = recorded_serve.recording.sent[test_id]
    assert (sent.raw_path, sent.query) == (path.encode(), query.encode())
    received = dict(sent.request_headers)
    assert received[b"x-custom"] == b"kept"
    assert received[b"authorization"] == b"Bearer demo-user"
    assert received[b"host"] == recorded_serve.base_url.removeprefix("http://").encode()
    # a hop-by-hop header, about the client's own connection
    assert received.get(b"connection") != b"close"


def test_a_header_in_utf_8_reaches_the_upstream_byte_for_byte(
    proxy: RunningProxy, recorded_serve: RecordedServe
) -> None:
    test_id = uuid.uuid4().hex
    httpx.get(f"{proxy.base_url}/v1/anything", headers={TEST_ID: test_id, "X-Name": "Zoë".encode()})
    assert dict(recorded_serve.recording.sent[test_id].request_headers)[b"x-name"] == "Zoë".encode()


def test_a_cors_preflight_is_answered_as_evalmock_serve_answers_it(proxy: RunningProxy) -> None:
    response = httpx.options(
        proxy.base_url + operation("test-set").url_path(agentId="example"),
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization,prefer",
            "Access-Control-Request-Private-Network": "true",
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert "GET" in response.headers["access-control-allow-methods"]
    assert response.headers["access-control-allow-headers"].lower() == "authorization,prefer"
    # a public page calling 127.0.0.1
    assert response.headers["access-control-allow-private-network"] == "true"


def test_a_browser_app_may_read_the_violations_header(proxy: RunningProxy) -> None:
    response = httpx.get(
        proxy.base_url + "/v1/agents/example/test-set/cases?projectId=x", headers={"Origin": ORIGIN}
    )
    exposed = [
        name.strip().lower()
        for name in response.headers["access-control-expose-headers"].split(",")
    ]
    assert HEADER in exposed and "x-request-id" in exposed


def test_a_request_body_and_url_credentials_reach_the_upstream(
    recorded_serve: RecordedServe, proxy_for: ProxyFactory
) -> None:
    """A body keeps its length (or comes chunked when it came chunked); a user and password in
    --upstream are sent as Basic credentials in place of the client's Authorization, as httpx sent
    them."""
    upstream = recorded_serve.base_url.replace("http://", "http://ana:s%3Ecret@")
    sized, chunked = uuid.uuid4().hex, uuid.uuid4().hex
    with proxy_for(upstream) as proxy:
        httpx.post(
            proxy.base_url + "/v1/anything",
            content=b'{"a": 1}',
            headers={TEST_ID: sized, "Authorization": "Bearer demo-user"},
        )
        httpx.post(
            proxy.base_url + "/v1/anything",
            content=iter([b'{"a"', b": 2}"]),
            headers={TEST_ID: chunked},
        )

    first, second = (
        dict(recorded_serve.recording.sent[test_id].request_headers) for test_id in (sized, chunked)
    )
    assert first[b"content-length"] == b"8" and b"transfer-encoding" not in first
    assert second[b"transfer-encoding"] == b"chunked" and b"content-length" not in second
    # ana:s>cret
    assert first[b"authorization"] == second[b"authorization"] == b"Basic YW5hOnM+Y3JldA=="


def test_the_proxy_adds_no_header_and_keeps_no_cookie_of_its_own(proxy_for: ProxyFactory) -> None:
    """A client library's own headers (User-Agent, Accept, Accept-Encoding) and its cookie jar are
    not the proxy's: a request carries only what its client sent, and a cookie one client was given
    never goes with another's."""
    received: list[dict[bytes, bytes]] = []

    async def upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
        received.append(dict(scope["headers"]))
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/plain"),
                    (b"set-cookie", b"session=alice; Path=/"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"ok"})

    # A host name, not an address: a cookie jar keeps no cookie of an IP address.
    with (
        serving(upstream) as base_url,
        proxy_for(base_url.replace("127.0.0.1", "localhost")) as proxy,
    ):
        with httpx.Client() as alice:
            given = alice.get(proxy.base_url + "/anything", headers={"Accept-Encoding": "identity"})
        raw = httpx.Request("GET", proxy.base_url + "/anything", headers={"X-Only": "this"})
        with httpx.Client() as bob:
            bob.send(raw)

    # the client gets it, as the upstream sent it
    assert given.headers["set-cookie"] == "session=alice; Path=/"
    assert received[0][b"accept-encoding"] == b"identity"
    assert b"cookie" not in received[1]
    # a request sent with no other header (httpx's send)
    assert set(received[1]) == {
        b"host",
        b"x-only",
    }
