"""A HAR that headless Chromium recorded of a browser app holding cookies, an X-Api-Key header and
an api_key query value, audited with `evalmock contract --har`: no secret in the console, the
Markdown or HTML report or JUnit, and the reports' curl commands reproduce the answer once the
variables they name are set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalmock.cli import main
from evalmock.harness.results.verdict import Verdict

from .secret_traffic import (
    BREACH,
    SECRETS,
    VARIABLES,
    SecretService,
    curl_lines,
    leaked,
    record_in_chromium,
    run_curl,
    secret_service,
)
from .serving import serving


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> SecretService:
    return secret_service(tmp_path_factory.mktemp("secret-service"))


def test_a_browser_har_audit_leaves_no_secret_in_any_output_and_its_curl_reproduces(
    service: SecretService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    har = tmp_path / "browser.har"
    with serving(service.app) as origin:
        answers = record_in_chromium(origin, service, har)
        recorded = har.read_text()
        assert [status for status, _ in answers] == [200, 400]
        assert leaked(recorded) == list(SECRETS)  # the recording does carry every secret
        entries = [
            e
            for e in json.loads(recorded)["log"]["entries"]
            if "/test-set/cases" in e["request"]["url"]
        ]
        assert all(e["request"]["cookies"] for e in entries)

        outputs = {name: tmp_path / name for name in ("report.md", "report.html", "junit.xml")}
        code = main(
            [
                "contract",
                "--har",
                str(har),
                "--base-url",
                origin,
                "--api",
                "test-set",
                "--targets",
                str(service.targets_path),
                "--report",
                str(outputs["report.md"]),
                "--junit",
                str(outputs["junit.xml"]),
            ]
        )
        code_html = main(
            [
                "contract",
                "--har",
                str(har),
                "--base-url",
                origin,
                "--api",
                "test-set",
                "--targets",
                str(service.targets_path),
                "--report",
                str(outputs["report.html"]),
            ]
        )
        console = capsys.readouterr()

        assert code == code_html == Verdict.VIOLATIONS.exit_code
        texts = {
            "stdout": console.out,
            "stderr": console.err,
            **{name: path.read_text() for name, path in outputs.items()},
        }
        assert {name: leaked(text) for name, text in texts.items()} == {name: [] for name in texts}
        markdown = texts["report.md"]
        assert f"`{BREACH}`" in markdown and BREACH in texts["junit.xml"]
        assert BREACH in texts["report.html"].replace("<wbr>", "")  # as read: <wbr> is no character
        # The echoed secrets are named by their variables in the breach's example.
        assert "$EVALMOCK_COOKIE_SESSION" in markdown
        for variable in VARIABLES:
            assert variable in console.out  # the note that says which variables to set

        [curl] = curl_lines(markdown)
        for place in (
            '"Cookie: ',
            "session=$EVALMOCK_COOKIE_SESSION",
            '"X-Api-Key: $EVALMOCK_X_API_KEY"',
            "api_key=$EVALMOCK_API_KEY",
            '"Authorization: Bearer $EVALMOCK_TOKEN"',
        ):
            assert place in curl
        assert run_curl(curl, VARIABLES) == (answers[1][0], answers[1][1].encode())
        # without the variables the gateway refuses it: they carry the secrets
        assert run_curl(curl, {})[0] == 401
