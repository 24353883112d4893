"""The proxy reads an upstream's JSON as a browser's `JSON.parse` does: `NaN` is not JSON, a
finding; an integer of 5,000 digits is JSON, judged by its schema."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from evalmock.contract.operations import operation
from evalmock.harness.results.audit_results import Results
from harness.builders import PROJECT
from harness.serving import serving

from .conftest import ProxyFactory


def page_with(literal: bytes) -> Any:
    """An upstream whose every answer is an empty page with one more member, `"extra": literal`."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b'{"extra": ' + literal + b', "data": [], "hasMore": false, "requestId": "r-1"}'
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", b"r-1"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def _proxied(proxy_for: ProxyFactory, literal: bytes) -> tuple[Results, str]:
    with serving(page_with(literal)) as upstream, proxy_for(upstream) as proxy:
        path = operation("test-set").url_path(agentId="agent-1")
        answer = httpx.get(f"{proxy.base_url}{path}?projectId={PROJECT}", timeout=10)
        assert answer.status_code == 200
        results = proxy.session.results()
    said = "\n".join(f"{f.check.name}: {e.message}" for f in results.findings for e in f.examples)
    return results, said


@pytest.mark.parametrize("literal", [b"NaN", b"-Infinity"])
def test_nan_or_infinity_in_an_answer_is_a_finding(proxy_for: ProxyFactory, literal: bytes) -> None:
    results, said = _proxied(proxy_for, literal)
    assert not results.conforms
    assert "JSON deserialization error" in said or "not JSON" in said


def test_an_integer_of_5000_digits_is_json_to_the_proxy(proxy_for: ProxyFactory) -> None:
    results, said = _proxied(proxy_for, b"1" + b"2" * 4999)
    assert "deserialization" not in said and "not JSON" not in said
    assert results.failures == []
