"""A browser app behind `evalmock proxy`, holding cookies, an X-Api-Key header and an api_key query
value, signing in for an access token: no secret in the proxy's console, its summary, report, JUnit
or recorded HAR; the HAR audits offline to curl commands that reproduce the answers once the
variables they name are set."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.cli import main
from evalmock.harness.report.terminal import print_summary
from evalmock.proxy.forwarding import MAX_JUDGED_BYTES
from evalmock.proxy.streaming import KEPT_ASIDE_BYTES
from harness.secret_traffic import (
    BREACH,
    VARIABLES,
    curl_lines,
    leaked,
    record_in_chromium,
    run_curl,
    secret_service,
)
from harness.serving import serving

from .conftest import ProxyFactory


def test_the_proxy_keeps_every_secret_out_of_its_outputs_and_its_har_still_reproduces(
    proxy_for: ProxyFactory, tmp_path: Path
) -> None:
    service = secret_service(tmp_path)
    outputs = {name: tmp_path / name for name in ("report.md", "junit.xml", "traffic.har")}
    with (
        serving(service.app) as gateway,
        proxy_for(
            gateway,
            "--api",
            "test-set",
            "--targets",
            str(service.targets_path),
            "--report",
            str(outputs["report.md"]),
            "--junit",
            str(outputs["junit.xml"]),
            "--har",
            str(outputs["traffic.har"]),
        ) as proxy,
    ):
        answers = record_in_chromium(proxy.base_url, service, tmp_path / "browser.har")
        assert [status for status, _ in answers] == [200, 400]
        results = proxy.session.write_outputs()
        summary = io.StringIO()
        print_summary(results, proxy.session.redactor, summary)

        texts = {
            "console": proxy.stream.getvalue(),
            "summary": summary.getvalue(),
            **{name: path.read_text() for name, path in outputs.items()},
        }
        assert {name: leaked(text) for name, text in texts.items()} == {name: [] for name in texts}
        assert any(BREACH in line for line in proxy.lines())
        recorded = json.loads(texts["traffic.har"])["log"]["entries"]
        calls = [entry for entry in recorded if "/test-set/cases?" in entry["request"]["url"]]
        # The sign-in streamed through unjudged, so its body is not recorded; its token was learned
        # from it on the way, so the gateway's echo of the token in an error body is recorded as its
        # variable.
        [sign_in] = [entry for entry in recorded if entry["request"]["url"].endswith("/session")]
        assert "text" not in sign_in["response"]["content"]
        # The request's body is recorded, as a browser's HAR has it, with the password as its
        # variable.
        assert json.loads(sign_in["request"]["postData"]["text"]) == {
            "user": "ada",
            "password": "$EVALMOCK_PASSWORD",
        }
        assert any(
            "$EVALMOCK_ACCESS_TOKEN" in call["response"]["content"].get("text", "")
            for call in calls
        )
        assert len(calls) == 2 and all(
            "api_key=$EVALMOCK_API_KEY" in call["request"]["url"] for call in calls
        )
        assert all(
            {"name": "x-api-key", "value": "$EVALMOCK_X_API_KEY"} in call["request"]["headers"]
            for call in calls
        )
        # Cookies are listed as a browser's HAR lists them, each value its variable.
        for call in calls:
            sent = {cookie["name"]: cookie["value"] for cookie in call["request"]["cookies"]}
            assert sent["session"] == "$EVALMOCK_COOKIE_SESSION"
            assert call["response"]["cookies"] == [
                {
                    "name": "rotated",
                    "value": "$EVALMOCK_COOKIE_ROTATED",
                    "path": "/",
                    "httpOnly": True,
                }
            ]
        [curl] = curl_lines(texts["report.md"])
        assert run_curl(curl, VARIABLES) == (answers[1][0], answers[1][1].encode())

        # The proxy's HAR, audited offline, keeps its variables, and its curl still reaches the same
        # answer.
        report = tmp_path / "offline.md"
        console = io.StringIO()
        with contextlib.redirect_stdout(console):
            code = main(
                [
                    "contract",
                    "--har",
                    str(outputs["traffic.har"]),
                    "--base-url",
                    gateway,
                    "--api",
                    "test-set",
                    "--targets",
                    str(service.targets_path),
                    "--report",
                    str(report),
                ]
            )
        assert code == 1
        assert leaked(console.getvalue()) == [] and leaked(report.read_text()) == []
        [offline_curl] = curl_lines(report.read_text())
        assert offline_curl == curl
        for variable in VARIABLES:
            assert variable in console.getvalue()


def test_request_bodies_are_in_the_har_redacted_or_said_why_not(
    proxy_for: ProxyFactory, tmp_path: Path
) -> None:
    """A form's body with its parameters, a JSON body, a body larger than the proxy keeps and one
    that is not text: each recorded as a browser's HAR records it, or its absence said; a form's
    password, first or not, is hidden."""
    seen: list[bytes] = []

    async def upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        seen.append(body)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    har = tmp_path / "traffic.har"
    large = b"x" * (MAX_JUDGED_BYTES + 1)
    with serving(upstream) as origin, proxy_for(origin, "--har", str(har)) as proxy:
        httpx.post(
            proxy.base_url + "/form",
            content=b"password=hunter2&user=ada",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        httpx.post(proxy.base_url + "/json", json={"user": "ada", "apiKey": "k-1"})
        httpx.post(proxy.base_url + "/large", content=large)
        httpx.post(proxy.base_url + "/binary", content=b"\xff\xfe\x00")
        httpx.get(proxy.base_url + "/none")
        proxy.session.write_outputs()
    assert seen[:4] == [
        b"password=hunter2&user=ada",
        b'{"user":"ada","apiKey":"k-1"}',
        large,
        b"\xff\xfe\x00",
    ]
    entries = {
        entry["request"]["url"].rsplit("/", 1)[1]: entry["request"]
        for entry in json.loads(har.read_text())["log"]["entries"]
    }
    form = entries["form"]["postData"]
    assert form["text"] == "password=$EVALMOCK_PASSWORD&user=ada"
    assert form["params"] == [
        {"name": "password", "value": "$EVALMOCK_PASSWORD"},
        {"name": "user", "value": "ada"},
    ]
    assert json.loads(entries["json"]["postData"]["text"]) == {
        "user": "ada",
        "apiKey": "$EVALMOCK_API_KEY",
    }
    assert entries["large"]["bodySize"] == len(large) and "text" not in entries["large"]["postData"]
    assert "more than the proxy keeps" in entries["large"]["postData"]["comment"]
    assert "not UTF-8 text" in entries["binary"]["postData"]["comment"]
    assert "postData" not in entries["none"] and entries["none"]["bodySize"] == 0
    assert "hunter2" not in har.read_text() and "k-1" not in har.read_text()


@pytest.fixture(autouse=True)
def _no_environment_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables a reader exports must not change what the proxy learns."""
    for name in ("EVALMOCK_TOKEN", "EVALMOCK_SECOND_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def test_an_unjudged_answer_is_read_for_secret_fields_only_up_to_its_bound(
    proxy_for: ProxyFactory,
) -> None:
    """A small JSON answer that streams through unjudged (a sign-in's) teaches the proxy its token;
    a larger one is not kept aside to be read, whatever it holds, and neither is recorded."""
    small_token, large_token = "acc-small-0f1e2d3c4b5a", "acc-large-9a8b7c6d5e4f"
    padding = "x" * KEPT_ASIDE_BYTES

    async def upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        answer = (
            {"accessToken": small_token}
            if scope["path"] == "/sign-in"
            else {"accessToken": large_token, "padding": padding}
        )
        body = json.dumps(answer).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    with serving(upstream) as origin, proxy_for(origin) as proxy:
        assert httpx.post(proxy.base_url + "/sign-in").json() == {"accessToken": small_token}
        assert httpx.get(proxy.base_url + "/export").json()["accessToken"] == large_token
        redactor = proxy.session.redactor
        assert redactor.text(f"echoed {small_token}") == "echoed $EVALMOCK_ACCESS_TOKEN"
        assert redactor.text(f"echoed {large_token}") == f"echoed {large_token}"
