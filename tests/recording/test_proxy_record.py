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
