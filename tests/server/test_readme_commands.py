"""The README's frontend section, pasted as written: each `curl` of its shell blocks, run by bash
against a started `evalmock serve` (its `BASE=` pointed at the mock's free 127.0.0.1 port), gets the
status it is there to show.

Run: the `curl` commands of the section's ```bash blocks ("For frontend developers: the mock" and
its subsections), each after the first block's `TOKEN=` and `BASE=` lines, as a reader pastes them
into one shell; the curl of "Bring your own data" against a mock started with `--data` and the
README's own ```yaml block, written to a file. The paging loop runs in
tests/server/test_request_targets.py. Skipped, with why:
- `python3.11 dev.py serve --data my-data.yaml` and `... --data-only`: each starts a server that
  runs until stopped (the mock the curl meets is started as they start it, by the fixture);
- the proxy's blocks (`python3.11 dev.py evalmock proxy --upstream https://staging.example.com`,
  with or without `--record staging.yaml`) and the replay of that recording
  (`python3.11 dev.py serve --data staging.yaml --data-only`): servers that run until stopped, in
  front of a made-up upstream; the record and replay flow runs in tests/recording/;
- the `fetch()` the banner prints and the SDK lines: not shell; the banner's requests run in
  tests/server/test_request_targets.py.
The three commands of "A world per test: sessions" run as one script, after the setup lines.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()

README = Path(__file__).resolve().parents[2] / "README.md"
CURL_S = 30
# Each curl of the section, in the README's order, with the status it shows: the reference page's
# request, the filter, a forced 503, DigitalOcean's test case; then your own data's list.
INTENDED = [200, 200, 503, 200]
INTENDED_WITH_DATA = [200]


def frontend_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## For frontend developers: the mock")
    return text[start : text.index("## For frontend developers: the proxy", start)]


def shell_blocks(section: str, language: str = "bash") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def commands(block: str) -> list[str]:
    """The block's commands, each continuation line (`\\` at the end) joined to its command."""
    return re.sub(r"\\\n\s*", " ", block).splitlines()


def curls(block: str) -> list[str]:
    """The block's curl commands, their trailing comments cut: those a reader pastes one by one."""
    return [re.sub(r"\s+#.*$", "", line) for line in commands(block) if line.startswith("curl ")]


def setup_lines(base_url: str) -> list[str]:
    """The first block's TOKEN= and BASE= lines, BASE pointed at `base_url`."""
    lines = [line for line in commands(shell_blocks(frontend_section())[0])]
    setup = [line for line in lines if line.startswith(("TOKEN=", "BASE="))]
    assert [line.split("=")[0] for line in setup] == ["TOKEN", "BASE"], setup
    return [setup[0], f"BASE={base_url}"]


def status_of(curl: str, base_url: str) -> int:
    """Run `curl` as pasted after the setup lines, and read the status it got."""
    script = "\n".join([*setup_lines(base_url), curl + " -s -o /dev/null -w '%{http_code}'"])
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=CURL_S)
    assert ran.returncode == 0, (curl, ran.stderr)
    return int(ran.stdout)


@pytest.fixture(autouse=True)
def _tools() -> None:
    for tool in ("bash", "curl"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH: the README's commands need it")


def test_each_curl_of_the_mock_s_first_block_gets_its_intended_status(
    live_server: LiveServer,
) -> None:
    found = curls(shell_blocks(frontend_section())[0])
    assert len(found) == len(INTENDED), found
    statuses = [status_of(curl, live_server.base_url) for curl in found]
    assert list(zip(found, statuses, strict=True)) == list(zip(found, INTENDED, strict=True))


@pytest.fixture(scope="module")
def data_server(
    live_server_factory: Callable[..., AbstractContextManager[LiveServer]], tmp_path_factory
) -> Iterator[LiveServer]:
    """A mock started as "Bring your own data" starts it, on the README's own my-data.yaml."""
    [data] = shell_blocks(frontend_section(), "yaml")
    path = tmp_path_factory.mktemp("readme") / "my-data.yaml"
    path.write_text(data, encoding="utf-8")
    with live_server_factory("--data", str(path)) as server:
        yield server


def test_the_curl_of_your_own_data_lists_the_readme_s_case(data_server: LiveServer) -> None:
    [block] = [b for b in shell_blocks(frontend_section()) if "--data my-data.yaml" in b]
    found = curls(block)
    assert len(found) == len(INTENDED_WITH_DATA), found
    assert [status_of(curl, data_server.base_url) for curl in found] == INTENDED_WITH_DATA


def session_block() -> list[str]:
    [block] = [b for b in shell_blocks(frontend_section()) if "/__evalmock/sessions" in b]
    return [re.sub(r"\s+#.*$", "", line) for line in commands(block)]


def test_the_session_s_three_commands_create_it_use_its_token_and_read_its_verdict(
    live_server: LiveServer,
) -> None:
    create, use, verdict = session_block()
    script = [
        *setup_lines(live_server.base_url),
        create,
        f"{use} -s -o /dev/null -w '%{{http_code}}\\n'",
        f"{verdict} -s",
    ]
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)], capture_output=True, text=True, timeout=CURL_S
    )
    assert ran.returncode == 0, ran.stderr
    status, answer = ran.stdout.split("\n", 1)
    judged = json.loads(answer)
    assert (status, judged["verdict"], judged["judged"]) == ("200", "CONFORMS", 1), ran.stdout


def test_every_shell_block_of_the_section_is_run_or_named_as_skipped() -> None:
    """A command added to the section is run here or named in this module's docstring."""
    blocks = shell_blocks(frontend_section())
    lines = [re.sub(r"\s+#.*$", "", line) for b in blocks for line in commands(b)]
    shell = [line for line in lines if line.strip() and not line.startswith("#")]
    skipped = [line for line in shell if line.startswith("python3.11 dev.py serve")]
    assert skipped == [
        "python3.11 dev.py serve --data my-data.yaml",
        "python3.11 dev.py serve --data my-data.yaml --data-only",
        "python3.11 dev.py serve --data staging.yaml --data-only",
    ]
    paging = {line for line in shell if "NEXT_CURSOR" in line or line.startswith(("CASES=", "  "))}
    paging |= {"while :; do", "done"}
    setup = {line for line in shell if line.startswith(("TOKEN=", "BASE="))}
    proxied = [line for line in shell if line.startswith("python3.11 dev.py evalmock proxy")]
    assert proxied == [
        "python3.11 dev.py evalmock proxy --upstream https://staging.example.com"
        " --record staging.yaml"
    ]
    session = set(session_block())
    run = [line for line in shell if line.startswith("curl ") and line not in session]
    assert (
        sorted(set(shell) - set(skipped) - set(proxied) - paging - setup - session - set(run)) == []
    )
    assert len(run) == len(INTENDED) + len(INTENDED_WITH_DATA)
