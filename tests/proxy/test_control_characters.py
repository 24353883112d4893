"""What an upstream sends reaches none of the proxy's files raw: the Markdown report and the HAR
recording show each control character (C0, DEL, C1) as its escape, so that `cat` of either obeys
none of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from evalmock.contract.operations import operation
from evalmock.harness.checks.policy import FAILED
from harness.builders import PROJECT
from harness.serving import serving

from .conftest import ProxyFactory

# a JSON string may hold C1 and DEL raw; C0 only escaped (which the parsed value holds raw)
KIND = b'"x\\u001b]0;CONFORMS\\u0007\\u001b[2J\\rCONFORMS\xc2\x9b2K\x7f"'
RAW = re.compile(b"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")  # C0 but \n, DEL, C1 as UTF-8


async def hostile_page(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b'{"data": [{"id": "case-1", "kind": ' + KIND + b'}], "requestId": "r-1"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def test_the_proxy_s_report_and_har_show_an_upstream_s_controls_as_escapes(
    proxy_for: ProxyFactory, tmp_path: Path
) -> None:
    report, har = tmp_path / "report.md", tmp_path / "traffic.har"
    with (
        serving(hostile_page) as upstream,
        proxy_for(upstream, "--report", str(report), "--har", str(har)) as proxy,
    ):
        path = operation("test-set").url_path(agentId="agent-1")
        answer = httpx.get(f"{proxy.base_url}{path}?projectId={PROJECT}", timeout=10)
        assert answer.status_code == 200
        results = proxy.session.write_outputs()
    assert any(f.outcome == FAILED for f in results.findings)
    for written in (report.read_bytes(), har.read_bytes()):
        assert RAW.findall(written) == []
    assert b"\\x1b]0;CONFORMS\\x07\\x1b[2J\\rCONFORMS\\x9b2K\\x7f" in report.read_bytes()
    assert b"CONFORMS\\u009b2K\\u007f" in har.read_bytes()  # the body as JSON text
