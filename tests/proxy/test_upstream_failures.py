"""When the upstream gives no answer, the proxy answers itself, in the API's own error body and
never hanging: 502 when it cannot be reached, 504 when it is slower than --timeout; neither is
judged, both are counted."""

from __future__ import annotations

import time

import httpx

from evalmock.contract.operations import operation
from harness.builders import PROJECT, TEST_CASE
from harness.serving import serving
from shared import assert_envelope, free_port

from .conftest import ProxyFactory
from .upstreams import broken_upstream

CASES = operation("test-set").url_path(agentId="example") + f"?projectId={PROJECT}"
TEST_CASE_PATH = operation("gradient").url_path(test_case_uuid=TEST_CASE)


def test_an_unreachable_upstream_is_a_502_in_each_api_s_own_body(proxy_for: ProxyFactory) -> None:
    with proxy_for(f"http://127.0.0.1:{free_port()}") as proxy:
        envelope = httpx.get(proxy.base_url + CASES, headers={"X-Request-Id": "mine-1"})
        digitalocean = httpx.get(proxy.base_url + TEST_CASE_PATH)
        notes = proxy.session.results().notes

    error = assert_envelope(envelope, 502, "bad-gateway")
    assert error["requestId"] == "mine-1"
    assert "could not be reached (ConnectionRefusedError: " in error["message"]
    assert "ssl:default" not in error["message"]  # aiohttp's own words for its connection pool
    body = digitalocean.json()
    assert (
        digitalocean.status_code == 502
        and digitalocean.headers["content-type"] == "application/json"
    )
    assert (
        set(body) == {"id", "message", "request_id"}
        and body["request_id"] == digitalocean.headers["x-request-id"]
    )
    assert any("2 answered 502 by the proxy" in note for note in notes), notes


def test_an_unreachable_upstream_s_credentials_are_not_in_the_502(proxy_for: ProxyFactory) -> None:
    """The client never had the user and password of --upstream: the proxy's own answer names the
    upstream without them, and its console line shows them as a variable."""
    with proxy_for(f"http://ana:s3cret-pass@127.0.0.1:{free_port()}") as proxy:
        answer = httpx.get(proxy.base_url + CASES)
        said = "\n".join(proxy.lines())

    error = assert_envelope(answer, 502, "bad-gateway")
    assert (
        "http://127.0.0.1:" in error["message"]
        and "s3cret-pass" not in answer.text
        and "ana" not in answer.text
    )
    assert "502 GET" in said and "s3cret-pass" not in said


def test_a_slow_upstream_is_a_504_after_the_timeout(proxy_for: ProxyFactory, broken: str) -> None:
    with proxy_for(broken, "--timeout", "0.5") as proxy:
        slow = httpx.get(
            proxy.base_url
            + operation("test-set").url_path(agentId="slow")
            + f"?projectId={PROJECT}",
            timeout=30,
        )
        said = proxy.lines()
        results = proxy.session.results()

    error = assert_envelope(slow, 504, "gateway-timeout")
    assert "did not answer within 0.5 s" in error["message"]
    [line] = [line for line in said if line.startswith("evalmock proxy: 504 GET ")]
    assert (
        line.count("evalmock proxy:") == 1 and ": the upstream did not answer within 0.5 s" in line
    )
    # the proxy's own answer is not judged
    assert not results.findings_of("failed") and results.rows("test-set")


def test_an_answer_larger_than_the_bound_streams_through_unjudged(
    proxy_for: ProxyFactory, broken: str
) -> None:
    url = operation("test-set").url_path(agentId="too-long") + f"?projectId={PROJECT}&limit=20"
    with proxy_for(broken) as proxy:
        direct = httpx.get(broken + url)
        proxy.forwarder.max_judged_bytes = len(direct.content) // 2
        proxied = httpx.get(proxy.base_url + url)
        results = proxy.session.results()

    assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
    # a page longer than its limit, but never held
    assert "evalmock-violations" not in proxied.headers
    assert not results.failures
    assert any(
        f"1 larger than {len(direct.content) // 2} bytes" in note for note in results.notes
    ), results.notes


def test_an_https_upstream_is_spoken_to_in_tls(proxy_for: ProxyFactory, broken: str) -> None:
    """The broken service speaks plain HTTP: a TLS handshake with it fails, and says so in a 502."""
    with proxy_for(broken.replace("http://", "https://")) as proxy:
        answer = httpx.get(proxy.base_url + CASES)

    error = assert_envelope(answer, 502, "bad-gateway")
    assert "could not be reached" in error["message"] and "SSL" in error["message"], error[
        "message"
    ]


def test_a_connection_the_upstream_closed_while_idle_is_not_reused(proxy_for: ProxyFactory) -> None:
    """uvicorn closes an idle kept-alive connection after a second here: the next request opens a
    new one."""
    with serving(broken_upstream(), timeout_keep_alive=1) as upstream, proxy_for(upstream) as proxy:
        first = httpx.get(proxy.base_url + CASES)
        time.sleep(1.6)
        second = httpx.get(proxy.base_url + CASES)

    assert (first.status_code, second.status_code) == (200, 200)
    assert second.json() == first.json()
