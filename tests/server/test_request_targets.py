"""Request targets as users send them, to a started `evalmock serve`: the README's paging loop,
pasted as written, pages to the end; the banner's requests reach the app; the characters Granian
refuses itself (docs/server-reference.md, "The request targets each server refuses") are refused
as documented."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from evalmock.server.http_server import granian_installed

from .helpers import AUTH, MAX_PAGES

LiveServer = Any  # tests/conftest.py's LiveServer: base_url, targets_path, log()

README = Path(__file__).resolve().parents[2] / "README.md"
PAGING_LOOP_S = 120
EXAMPLE_LIST = (
    "/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"
    "&include=retired&limit=100"
)
_PAGE_LINE = re.compile(r"(\d+) cases, hasMore: (True|False)")


def readme_paging_example(base_url: str) -> str:
    """The README's first shell block's TOKEN and BASE lines (BASE pointed at `base_url`) and its
    paging paragraph, from its `# Page:` comment to the blank line after it, as written."""
    block = next(
        b for b in re.findall(r"```bash\n(.*?)```", README.read_text(), re.S) if "# Page:" in b
    )
    lines = block.splitlines()
    setup = [line for line in lines if line.startswith(("TOKEN=", "BASE="))]
    assert [line.split("=")[0] for line in setup] == ["TOKEN", "BASE"], setup
    start = next(n for n, line in enumerate(lines) if line.startswith("# Page:"))
    end = next((n for n in range(start, len(lines)) if not lines[n].strip()), len(lines))
    setup[1] = f"BASE={base_url}"
    return "\n".join([*setup, *lines[start:end]]) + "\n"


def _cases_listed(base_url: str) -> int:
    """How many cases the example list holds, walked with httpx."""
    total, cursor = 0, None
    for _ in range(MAX_PAGES):
        url = base_url + EXAMPLE_LIST + (f"&cursor={cursor}" if cursor else "")
        page = httpx.get(url, headers=AUTH, timeout=10).json()
        total += len(page["data"])
        cursor = page.get("nextCursor")
        if not page["hasMore"]:
            return total
    raise AssertionError(f"more than {MAX_PAGES} pages")


def test_the_readme_s_paging_example_pasted_as_written_pages_to_the_end(
    live_server: LiveServer,
) -> None:
    for tool in ("bash", "curl", "python3"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH: the README's loop needs it")
    script = readme_paging_example(live_server.base_url)
    ran = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=PAGING_LOOP_S
    )
    assert ran.returncode == 0, ran.stderr
    pages = [_PAGE_LINE.fullmatch(line) for line in ran.stderr.splitlines()]
    assert pages and all(pages), ran.stderr  # one line a page, and nothing else (no traceback)
    more = [page[2] for page in pages if page]
    assert more == ["True"] * (len(more) - 1) + ["False"] and len(more) > 1, more
    assert sum(int(page[1]) for page in pages if page) == _cases_listed(live_server.base_url)


def raw_get(base_url: str, target: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
    """GET `target` exactly as given (no client encodes it): status, headers, body."""
    address = urlsplit(base_url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        connection.sendall(
            b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Bearer demo-user\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.split(b"\r\n")
    headers = dict(
        (name.strip().lower(), value.strip())
        for name, _, value in (line.partition(b":") for line in header_lines)
    )
    return int(status_line.split()[1]), headers, body


def _banner_targets(banner: str) -> list[str]:
    urls = re.findall(r"(?:curl|fetch\()\s*'([^']+)'", banner)
    return [urlsplit(url).path + "?" + urlsplit(url).query for url in urls]


def test_the_banner_s_requests_reach_the_app(live_server: LiveServer) -> None:
    targets = _banner_targets(live_server.log())
    assert len(targets) >= 3, live_server.log()  # a curl for each API and a fetch()
    for target in targets:
        status, headers, _ = raw_get(live_server.base_url, target.encode())
        assert status == 200 and headers.get(b"x-request-id"), (target, status, headers)


# (the target's characters, where) as docs/server-reference.md's table lists them: refused by
# Granian itself.
GRANIAN_REFUSES = [
    (b"<nextCursor>", "query"),
    (b">", "path"),
    (b"`", "path"),
    (b'"', "query"),
    (b"a b", "query"),
    (b"\xe9", "query"),  # Latin-1, not UTF-8
]


def _target(text: bytes, where: str) -> bytes:
    if where == "path":
        return (
            b"/v1/agents/a"
            + text
            + b"b/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"
        )
    return EXAMPLE_LIST.encode() + b"&cursor=" + text


@pytest.mark.parametrize(("text", "where"), GRANIAN_REFUSES)
def test_granian_answers_a_target_it_refuses_itself_with_a_bare_400(
    live_server: LiveServer, text: bytes, where: str
) -> None:
    if not granian_installed():
        pytest.skip("Granian is not installed for this platform: the default server is uvicorn")
    status, headers, body = raw_get(live_server.base_url, _target(text, where))
    assert (status, body, b"x-request-id" in headers) == (400, b"", False)


@pytest.fixture(scope="module")
def uvicorn_server(
    live_server_factory: Callable[..., AbstractContextManager[LiveServer]],
) -> Iterator[LiveServer]:
    with live_server_factory("--server", "uvicorn") as server:
        yield server


@pytest.mark.parametrize(("text", "where"), GRANIAN_REFUSES[:4])
def test_uvicorn_passes_what_granian_refuses_of_printable_ascii_to_the_app(
    uvicorn_server: LiveServer, text: bytes, where: str
) -> None:
    status, headers, body = raw_get(uvicorn_server.base_url, _target(text, where))
    assert status in (400, 404) and headers.get(b"x-request-id") and b'"requestId"' in body
