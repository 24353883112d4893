"""`evalmock proxy` as a process: it says where it listens, writes its outputs on SIGUSR1 and again,
covering all traffic, on Ctrl-C (SIGINT) or SIGTERM, prints the summary and exits with the verdict;
bad options exit 2."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from evalmock.cli import build_parser, main
from evalmock.contract.operations import operation
from evalmock.proxy.command import banner, build_proxy
from harness.builders import PROJECT
from shared import BOTH_SERVERS, free_port

READY_S = 30.0  # bound on start-up and on each wait below
TOO_LONG = operation("test-set").url_path(agentId="too-long") + f"?projectId={PROJECT}&limit=2"


@contextmanager
def proxy_process(
    folder: Path, upstream: str, *options: str
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "evalmock",
        "proxy",
        "--upstream",
        upstream,
        "--port",
        str(port),
        *options,
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _answers(base_url) or process.poll() is not None)
        assert process.poll() is None, process.communicate()
        yield process, base_url
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=READY_S)


def _answers(base_url: str) -> bool:
    try:
        httpx.get(base_url + "/", timeout=1.0)
    except httpx.TransportError:
        return False
    return True


def _until(condition: object) -> None:
    deadline = time.monotonic() + READY_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.1)


def _entries(har: Path) -> int:
    return len(json.loads(har.read_text())["log"]["entries"])


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_outputs_on_demand_and_at_the_end_cover_all_traffic(
    tmp_path: Path, broken: str, stop: int
) -> None:
    outputs = ["--report", "report.md", "--junit", "junit.xml", "--har", "traffic.har"]
    with proxy_process(tmp_path, broken, *outputs) as (process, base_url):
        assert "evalmock-violations" in httpx.get(base_url + TOO_LONG).headers
        process.send_signal(signal.SIGUSR1)
        _until(
            lambda: all(
                (tmp_path / name).exists() for name in ("report.md", "junit.xml", "traffic.har")
            )
        )
        on_demand = _entries(tmp_path / "traffic.har")
        httpx.get(base_url + TOO_LONG)
        process.send_signal(stop)
        out, err = process.communicate(timeout=READY_S)

    assert process.returncode == 1, err  # the verdict on the traffic: violations
    assert f"-> {broken}" in out and "VIOLATIONS" in out and "page_holds_at_most_limit" in out
    assert "FAILED page_holds_at_most_limit [page]" in err
    assert "Traceback" not in err
    assert _entries(tmp_path / "traffic.har") == on_demand + 1
    assert (
        "2 responses of `GET /v1/agents/{agentId}/test-set/cases -> 200`"
        in (tmp_path / "report.md").read_text()
    )


def test_no_traffic_is_incomplete(tmp_path: Path, broken: str) -> None:
    with proxy_process(tmp_path, broken, "--report", "report.md") as (process, _):
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=READY_S)
    assert process.returncode == 4 and "INCOMPLETE" in out
    assert "no page rule was checked" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--upstream", "staging.example.com"], "--upstream must be an http(s) URL"),
        (
            ["--upstream", "http://"],
            "--upstream must be an http(s) URL such as http://127.0.0.1:8080, got 'http://'",
        ),
        (
            ["--upstream", "http://staging example.com"],
            "--upstream must name a host, without spaces",
        ),
        (["--upstream", "http://:8080"], "--upstream must name a host"),
        (
            ["--upstream", "http://127.0.0.1:99999"],
            "--upstream's port is not a port (Port out of range 0-65535)",
        ),
        (["--upstream", "http://127.0.0.1:80x"], "--upstream's port is not a port"),
        (["--upstream", "http://[::1:8080"], "--upstream is not a URL (Invalid IPv6 URL)"),
        (
            ["--upstream", "http://127.0.0.1:9/v1/"],
            "--upstream ends in /v1, which the test-set API's document adds to "
            "every path itself: use http://127.0.0.1:9",
        ),
        (
            ["--upstream", "http://127.0.0.1:9", "--report", "report.pdf"],
            "--report must end in .md or .html",
        ),
        (
            ["--upstream", "http://127.0.0.1:9", "--targets", "no-such-targets.toml"],
            "cannot read targets file",
        ),
        (
            ["--upstream", "http://127.0.0.1:9", "--har", f"{__file__}/traffic.har"],
            f"--har '{__file__}/traffic.har': '{__file__}' is not a directory",
        ),
    ],
)
def test_bad_options_exit_2_with_the_reason(
    options: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proxy", *options]) == 2
    assert problem in capsys.readouterr().err


def test_a_misspelled_targets_key_exits_2_naming_the_file_the_key_and_a_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "targets.toml"
    path.write_text('[[test_set.projects]]\nagent_id = "a"\nprojectid = "p"\n', encoding="utf-8")
    assert main(["proxy", "--upstream", "http://127.0.0.1:9", "--targets", str(path)]) == 2
    assert (
        f"{path}: test_set.projects[0]: unknown key projectid; did you mean project_id?"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize("server", BOTH_SERVERS)
def test_a_taken_port_exits_2_saying_so_before_the_banner(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert (
            main(
                [
                    "proxy",
                    "--upstream",
                    "http://127.0.0.1:9",
                    "--port",
                    str(port),
                    "--server",
                    server,
                ]
            )
            == 2
        )
    said = capsys.readouterr()
    assert f"evalmock proxy: cannot listen on 127.0.0.1:{port}: Address already in use" in said.err
    assert said.out == ""  # no banner


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("0.0.0.0", "http://127.0.0.1:8099"),
        ("::", "http://[::1]:8099"),
        ("127.0.0.1", "http://127.0.0.1:8099"),
    ],
)
def test_the_banner_names_a_url_a_browser_can_open(host: str, shown: str, broken: str) -> None:
    """Listening on every interface (a container's --host 0.0.0.0) is said as the loopback URL, as
    serve says it."""
    args = build_parser().parse_args(
        ["proxy", "--upstream", broken, "--host", host, "--port", "8099"]
    )
    _, _, session = build_proxy(args)
    assert banner(args, session).splitlines()[0].startswith(f"evalmock proxy: {shown} -> {broken} ")


def test_the_banner_names_the_published_url_in_a_container(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `evalmock serve` does: EVALMOCK_PUBLIC_URL names where users reach the proxy (`-p
    127.0.0.1:18081:8081`)."""
    monkeypatch.setenv("EVALMOCK_PUBLIC_URL", "http://127.0.0.1:18081/")
    args = build_parser().parse_args(["proxy", "--upstream", broken, "--host", "0.0.0.0"])
    _, _, session = build_proxy(args)
    assert (
        banner(args, session)
        .splitlines()[0]
        .startswith(f"evalmock proxy: http://127.0.0.1:18081 -> {broken} ")
    )


def test_the_proxy_collects_its_garbage_less_often_than_pythons_defaults() -> None:
    code = (
        "import gc; from evalmock.proxy.command import COLLECTOR_THRESHOLDS, collect_less_often; "
        "before = gc.get_threshold(); collect_less_often(); "
        "print(before, gc.get_threshold() == COLLECTOR_THRESHOLDS, gc.get_freeze_count() > 0)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.split() == ["(700,", "10,", "10)", "True", "True"]
