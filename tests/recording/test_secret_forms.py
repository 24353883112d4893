"""No secret of the traffic reaches a data file in any form a service may echo it in: another
letter case, %-encoded, base64, with a zero-width character inside, full-width, a Basic password
decoded, or as an id in the request's path; each is left out and named by where it stands, never by
its value; through `fixtures import` and through `proxy --record` alike."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from data_builders import AGENT, PROJECT, case
from evalmock.cli import main
from harness.serving import serving
from proxy.running import proxying

from .har_files import entry, har, list_url, page
from .walking import LIST, browser

TOKEN = "bearer-Token-0123456789"
PASSWORD = "s3cret-passw0rd!"
CREDENTIALS = {"Authorization": f"Bearer {TOKEN}"}
BASIC = {"Authorization": "Basic " + base64.b64encode(f"ada:{PASSWORD}".encode()).decode()}

FORMS = {
    "upper case": TOKEN.upper(),
    "lower case": TOKEN.lower(),
    "%-encoded": "".join(f"%{byte:02X}" for byte in TOKEN.encode()),
    "base64": base64.b64encode(TOKEN.encode()).decode(),
    "base64url in a sentence": "see " + base64.urlsafe_b64encode(TOKEN.encode()).decode() + " ok",
    "a zero-width joiner inside": TOKEN[:6] + "\u200d" + TOKEN[6:],
    "full-width": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in TOKEN),
    "in a URL's path": f"https://elsewhere.example/{TOKEN.upper()}/x",
}


def imported(
    tmp_path: Path, entries: list, capsys: pytest.CaptureFixture[str]
) -> tuple[bytes, str]:
    path = har(tmp_path / "staging.har", entries)
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    return out.read_bytes(), capsys.readouterr().out


def _left_out(written: bytes, summary: str, shown: str) -> None:
    assert b"case-plain" in written
    assert b"case-echo" not in written
    assert shown.encode() not in written and shown not in summary
    assert "it holds a secret of the traffic; left out" in summary


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("where", ["a field", "a key", "deep in a tool's args"])
def test_the_token_in_any_form_leaves_its_case_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str, where: str
) -> None:
    shown = FORMS[form]
    echo = {
        "a field": {"runId": f"run {shown}"},
        "a key": {"expect": {"answer": {"verdict": "wrong", "shouldSay": "x", shown: 1}}},
        "deep in a tool's args": {
            "expect": {
                "decisions": {
                    "verdict": "wrong",
                    "shouldCall": [{"tool": "t", "args": {"a": [{"b": {"c": shown}}]}}],
                }
            }
        },
    }[where]
    cases = [
        case("case-plain", "2026-10-05T12:00:00Z"),
        case("case-echo", "2026-10-04T12:00:00Z", **echo),
    ]
    written, summary = imported(
        tmp_path, [entry(list_url(AGENT, PROJECT), 200, page(cases), headers=CREDENTIALS)], capsys
    )
    _left_out(written, summary, shown)


def test_the_decoded_password_of_basic_credentials_leaves_its_case_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        case("case-plain", "2026-10-05T12:00:00Z"),
        case("case-echo", "2026-10-04T12:00:00Z", runId=f"signed in with {PASSWORD}"),
    ]
    written, summary = imported(
        tmp_path, [entry(list_url(AGENT, PROJECT), 200, page(cases), headers=BASIC)], capsys
    )
    _left_out(written, summary, PASSWORD)


@pytest.mark.parametrize("agent", [TOKEN, TOKEN.upper()])
def test_the_token_as_the_agent_id_of_the_path_leaves_the_list_out_unnamed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    cases = [case("case-echo", "2026-10-04T12:00:00Z")]
    written, summary = imported(
        tmp_path, [entry(list_url(agent, PROJECT), 200, page(cases), headers=CREDENTIALS)], capsys
    )
    assert agent.encode() not in written and b"case-echo" not in written
    assert agent not in summary and TOKEN not in summary
    assert "its list's ids hold a secret of the traffic" in summary
    assert "(holds a secret)" in summary


def test_a_secret_in_the_place_a_refusal_names_is_not_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = TOKEN.upper()
    text = '{"data": [{"id": "case-echo", "expect": {"' + shown + '": NaN}}], "hasMore": false}'
    written, summary = imported(
        tmp_path, [entry(list_url(AGENT, PROJECT), 200, text, headers=CREDENTIALS)], capsys
    )
    assert shown not in summary and shown.encode() not in written
    assert "left out; why quotes a secret of the traffic" in summary


def echoing_service(app_cases: list[dict[str, Any]]) -> Any:
    """A list of the test-set API whose answers echo the caller's token, upper-cased, and its
    cookie in a case: what `proxy --record` must keep out of the data file."""

    async def cases(request: Request) -> JSONResponse:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        cookie = request.headers.get("cookie", "")
        echo = case("case-echo", "2026-10-04T12:00:00Z", runId=f"for {token.upper()} ({cookie})")
        return JSONResponse({"data": [*app_cases, echo], "hasMore": False})

    return Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", cases)])


def test_proxy_record_keeps_what_a_service_echoes_of_the_caller_s_credentials_out(
    tmp_path: Path,
) -> None:
    data = tmp_path / "staging.yaml"
    upstream_app = echoing_service([case("case-plain", "2026-10-05T12:00:00Z")])
    with serving(upstream_app) as upstream, proxying(upstream, "--record", str(data)) as proxy:
        with browser(proxy.base_url, TOKEN, cookie="theme=dark-secret-cookie") as client:
            answer = client.get(LIST.format(agent=AGENT), params={"projectId": PROJECT})
            assert answer.status_code == 200 and TOKEN.upper() in answer.text  # it did echo
        proxy.session.write_outputs()  # as `kill -USR1` does
    written = data.read_bytes()
    assert b"case-plain" in written and b"case-echo" not in written
    for secret in (TOKEN, TOKEN.upper(), "dark-secret-cookie"):
        assert secret.encode() not in written
