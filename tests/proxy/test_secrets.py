"""A browser app behind `evalmock proxy`, holding cookies, an X-Api-Key header and an api_key query value: no secret
in the proxy's console, its summary, report, JUnit or recorded HAR; the HAR audits offline to curl commands that
reproduce the answers once the variables they name are set."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from evalmock.cli import main
from evalmock.harness.report import print_summary
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
        proxy_for: ProxyFactory, tmp_path: Path) -> None:
    service = secret_service(tmp_path)
    outputs = {name: tmp_path / name for name in ("report.md", "junit.xml", "traffic.har")}
    with serving(service.app) as gateway, proxy_for(
            gateway, "--api", "test-set", "--targets", str(service.targets_path), "--report", str(outputs["report.md"]),
            "--junit", str(outputs["junit.xml"]), "--har", str(outputs["traffic.har"])) as proxy:
        answers = record_in_chromium(proxy.base_url, service, tmp_path / "browser.har")
        assert [status for status, _ in answers] == [200, 400]
        results = proxy.session.write_outputs()
        summary = io.StringIO()
        print_summary(results, proxy.session.redactor, summary)

        texts = {"console": proxy.stream.getvalue(), "summary": summary.getvalue(),
                 **{name: path.read_text() for name, path in outputs.items()}}
        assert {name: leaked(text) for name, text in texts.items()} == {name: [] for name in texts}
        assert any(BREACH in line for line in proxy.lines())
        recorded = json.loads(texts["traffic.har"])["log"]["entries"]
        calls = [entry for entry in recorded if "/test-set/cases?" in entry["request"]["url"]]
        assert len(calls) == 2 and all("api_key=$EVALMOCK_API_KEY" in call["request"]["url"] for call in calls)
        assert all({"name": "x-api-key", "value": "$EVALMOCK_X_API_KEY"} in call["request"]["headers"]
                   for call in calls)
        [curl] = curl_lines(texts["report.md"])
        assert run_curl(curl, VARIABLES) == (answers[1][0], answers[1][1].encode())

        # The proxy's HAR, audited offline, keeps its variables, and its curl still reaches the same answer.
        report = tmp_path / "offline.md"
        console = io.StringIO()
        with contextlib.redirect_stdout(console):
            code = main(["contract", "--har", str(outputs["traffic.har"]), "--base-url", gateway, "--api",
                         "test-set", "--targets", str(service.targets_path), "--report", str(report)])
        assert code == 1
        assert leaked(console.getvalue()) == [] and leaked(report.read_text()) == []
        [offline_curl] = curl_lines(report.read_text())
        assert offline_curl == curl
        for variable in VARIABLES:
            assert variable in console.getvalue()


@pytest.fixture(autouse=True)
def _no_environment_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables a reader exports must not change what the proxy learns."""
    for name in ("EVALMOCK_TOKEN", "EVALMOCK_SECOND_TOKEN"):
        monkeypatch.delenv(name, raising=False)
