"""`evalmock serve --access-log` writes no secret: a query value whose name says secret is hidden in
the access line, under uvicorn (one process or several workers) and Granian alike; everything else
in the line is as sent."""

from __future__ import annotations

import logging
import signal
import time
from pathlib import Path

import httpx
import pytest

from conftest import start_server, stop_server
from evalmock.server.access_log import HIDDEN, RequestLine, UvicornRequestLine, hidden_secrets
from shared import BOTH_SERVERS

SECRET = "s3cr3t-value-4711"
TARGET = (
    f"/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&access_token={SECRET}"
    f"&limit=5&sig={SECRET}"
)
SHOWN = (
    f"/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&access_token={HIDDEN}"
    f"&limit=5&sig={HIDDEN}"
)


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        (TARGET, SHOWN),
        # no secret: unchanged
        (
            "/v1/x?cursor=abc.def&include=retired",
            "/v1/x?cursor=abc.def&include=retired",
        ),
        ("/v1/x", "/v1/x"),
        ("/v1/x?apiKey=&token", "/v1/x?apiKey=&token"),  # nothing to hide
        ("/v1/x?X-Api-Key=k1;password=p2", f"/v1/x?X-Api-Key={HIDDEN};password={HIDDEN}"),
        # a session token pasted where a session id goes
        ("/__evalmock/sessions/evm_Ab-3_x/faults", f"/__evalmock/sessions/{HIDDEN}/faults"),
        ("/__evalmock/sessions/evm_Ab-3_x?x=1", f"/__evalmock/sessions/{HIDDEN}?x=1"),
        ("/__evalmock/sessions/ses_Ab-3_x", "/__evalmock/sessions/ses_Ab-3_x"),
    ],
)
def test_secret_named_query_values_are_hidden_and_nothing_else_changes(
    target: str, shown: str
) -> None:
    assert hidden_secrets(target) == shown


def test_both_servers_records_hide_the_secret() -> None:
    granian = {
        "addr": "127.0.0.1",
        "method": "GET",
        "path": TARGET.split("?")[0],
        "query_string": TARGET.split("?")[1],
        "protocol": "HTTP/1.1",
        "status": 200,
        "dt_ms": 1.0,
    }
    record = logging.LogRecord(
        "granian.access", logging.INFO, __file__, 1, "%(path)s", (granian,), None
    )
    assert (
        RequestLine().filter(record)
        and SECRET not in record.getMessage()
        and SHOWN in record.getMessage()
    )
    uvicorn = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", TARGET, "1.1", 200),
        None,
    )
    assert UvicornRequestLine().filter(uvicorn)
    assert uvicorn.getMessage() == f'127.0.0.1:5 - "GET {SHOWN} HTTP/1.1" 200'


@pytest.mark.parametrize("server", BOTH_SERVERS)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_access_log_of_a_running_server_has_no_secret(
    tmp_path: Path, server: str, workers: str
) -> None:
    live = start_server(tmp_path, "--access-log", "--server", server, "--workers", workers)
    try:
        answer = httpx.get(
            live.base_url + TARGET, headers={"Authorization": "Bearer demo-user"}, timeout=10
        )
        # the query names parameters the document does not: refused, and logged
        assert answer.status_code == 400
        assert SECRET not in answer.text
        deadline = time.monotonic() + 10
        while "access_token=" not in live.log() and time.monotonic() < deadline:
            time.sleep(0.05)  # the worker writes its line after answering
    finally:
        live.process.send_signal(signal.SIGTERM)
        live.process.wait(timeout=20)
        stop_server(live)
    log = live.log()
    assert f'"GET {SHOWN} HTTP/1.1" 400' in log, log
    assert SECRET not in log
