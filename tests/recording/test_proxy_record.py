"""`evalmock proxy --record DATA` as a process: the data file written on SIGUSR1 and again, covering
all traffic, on Ctrl-C, with the import's summary on standard output."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from evalmock.cli import main
from harness.fairness.independent_service import Service
from harness.fairness.service_data import DRAFTING, MAIN_PROJECT
from harness.serving import serving
from proxy.running import proxying
from shared import free_port

from .walking import LIST, browser

READY_S = 30.0  # bound on start-up and on each wait below
TOKEN = "fair-user"


def _until(condition: object) -> None:
    deadline = time.monotonic() + READY_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.1)


def _listening(base_url: str) -> bool:
    try:
        httpx.get(base_url + "/", timeout=1.0)
    except httpx.TransportError:
        return False
    return True


def _cases(path: Path) -> list[str]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [case["id"] for entry in document["testSet"] for case in entry["cases"]]


def test_the_data_file_is_written_on_usr1_and_on_ctrl_c_covering_all_traffic(
    tmp_path: Path,
) -> None:
    data = tmp_path / "staging.yaml"
    with serving(Service().app) as upstream:
        port = free_port()
        command = [sys.executable, "-m", "evalmock", "proxy", "--upstream", upstream]
        process = subprocess.Popen(
            [*command, "--port", str(port), "--record", str(data)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            _until(lambda: _listening(base_url) or process.poll() is not None)
            with browser(base_url, TOKEN) as client:
                path = LIST.format(agent=DRAFTING)
                first = client.get(path, params={"projectId": MAIN_PROJECT, "limit": 5}).json()
                process.send_signal(signal.SIGUSR1)
                _until(data.exists)
                on_demand = _cases(data)
                params = {"projectId": MAIN_PROJECT, "limit": 5, "cursor": first["nextCursor"]}
                second = client.get(path, params=params).json()
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=READY_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=READY_S)
    assert "Traceback" not in err
    assert on_demand == [case["id"] for case in first["data"]]
    assert _cases(data) == [case["id"] for case in first["data"] + second["data"]]
    assert f"wrote {data}: 1 list, 10 cases, 0 test cases" in out
    assert "partial: a walk (no filter) stopped after 2 pages with hasMore true" in out


def test_proxy_record_anonymizes_with_the_seed_asked_for(tmp_path: Path) -> None:
    data = str(tmp_path / "staging.yaml")
    with proxying("http://127.0.0.1:9", "--record", data, "--anonymize", "--seed", "7") as proxy:
        assert proxy.session.data is not None
        assert proxy.session.data.options.anonymize_seed == 7
    with proxying("http://127.0.0.1:9", "--record", data, "--seed", "7") as proxy:
        assert proxy.session.data is not None
        assert proxy.session.data.options.anonymize_seed is None


def test_proxy_anonymize_without_record_exits_2_saying_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["proxy", "--upstream", "http://127.0.0.1:9", "--anonymize", "--port", "0"]) == 2
    assert "--anonymize makes up the people of the --record file: name one" in (
        capsys.readouterr().err
    )


PAGES, PER_PAGE = 40, 100  # 4,000 cases: writing them stopped the proxy for 8.5 s


def _pages_upstream() -> object:
    """A service of one list, PAGES pages of PER_PAGE valid cases, page N at cursor `cN`."""
    import json as json_module

    from data_builders import PROJECT, case

    async def app(scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http":
            return
        query = dict(
            pair.split("=", 1) for pair in scope["query_string"].decode().split("&") if "=" in pair
        )
        number = int(query.get("cursor", "c0")[1:])
        cases = [
            case(
                f"case-{number * PER_PAGE + n:05d}",
                f"2026-10-{1 + n % 28:02d}T12:{number:02d}:{n % 60:02d}Z",
                project=PROJECT,
            )
            for n in range(PER_PAGE)
        ]
        body = {"data": cases, "hasMore": number + 1 < PAGES}
        if number + 1 < PAGES:
            body["nextCursor"] = f"c{number + 1}"
        raw = json_module.dumps(body).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": raw})  # type: ignore[operator]

    return app


def test_the_proxy_answers_on_while_usr1_writes_thousands_of_cases(tmp_path: Path) -> None:
    from data_builders import AGENT, PROJECT

    data = tmp_path / "big.yaml"
    path = f"/v1/agents/{AGENT}/test-set/cases"
    with serving(_pages_upstream()) as upstream:
        port = free_port()
        command = [sys.executable, "-m", "evalmock", "proxy", "--upstream", upstream]
        said = (tmp_path / "said.txt").open("w")  # a pipe left unread would stop the proxy
        process = subprocess.Popen(
            [*command, "--port", str(port), "--record", str(data)],
            stdout=said,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            _until(lambda: _listening(base_url) or process.poll() is not None)
            with httpx.Client(base_url=base_url, timeout=READY_S) as client:
                for number in range(PAGES):
                    params = {"projectId": PROJECT, "limit": PER_PAGE}
                    if number:
                        params["cursor"] = f"c{number}"
                    client.get(path, params=params)
                process.send_signal(signal.SIGUSR1)
                signalled = time.monotonic()
                waits = []
                while not data.exists():
                    asked = time.monotonic()
                    client.get(path, params={"projectId": PROJECT, "limit": 1})
                    waits.append(time.monotonic() - asked)
                    assert time.monotonic() - signalled < 120, "the file was never written"
                writing = time.monotonic() - signalled
            process.send_signal(signal.SIGINT)
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=READY_S)
            said.close()
    out = (tmp_path / "said.txt").read_text(encoding="utf-8")
    assert "Traceback" not in out
    assert "4000 cases" in out or "4,000 cases" in out, out[:2000]
    # answers went on while the file was written: none waited for the whole write
    assert len(waits) >= 2, (writing, waits)
    assert max(waits) < max(1.0, writing / 2), (writing, max(waits))
