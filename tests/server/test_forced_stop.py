"""A second Ctrl-C stops `evalmock serve` at once under either server, and its log says so in one
line instead of a traceback per task."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import httpx
import pytest

from conftest import LiveServer, start_server, stop_server
from evalmock.server.forced_stop import CUT_OFF, WORKER_CUT_OFF, ForcedStop, WorkerStopped
from shared import BOTH_SERVERS, needs_granian

DELAYED = "/v1/agents/example/test-set/cases?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"


def cancelled_on_interrupt() -> asyncio.CancelledError:
    """A CancelledError raised while a KeyboardInterrupt was handled, as the loop's last
    cancellation raises it."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise asyncio.CancelledError  # noqa: B904 - the context is what marks it
    except asyncio.CancelledError as exc:
        return exc


def record(message: str, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc else None
    return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, message, (), exc_info)


def test_the_first_task_cut_off_becomes_one_warning_and_the_others_are_dropped() -> None:
    stop = ForcedStop()
    first = record("Exception in ASGI application\n", cancelled_on_interrupt())
    assert stop.filter(first)
    assert first.getMessage() == CUT_OFF and first.exc_info is None and first.levelname == "WARNING"
    assert not stop.filter(record("Exception in ASGI application\n", cancelled_on_interrupt()))


def test_the_lifespan_cut_off_is_read_from_the_traceback_starlette_wrote() -> None:
    text = "".join(traceback.format_exception(cancelled_on_interrupt()))
    assert "KeyboardInterrupt" in text  # the context is part of what Starlette's router writes
    stop = ForcedStop()
    lifespan = record(text)
    assert stop.filter(lifespan) and lifespan.getMessage() == CUT_OFF


def test_every_other_error_is_logged_as_it_came() -> None:
    stop = ForcedStop()
    # not on an interrupt
    plain_cancel = record("Exception in ASGI application\n", asyncio.CancelledError())
    failure = record("Exception in ASGI application\n", ValueError("boom"))
    text = record("Application startup failed. Exiting.")
    for kept in (plain_cancel, failure, text):
        message = kept.getMessage()
        assert stop.filter(kept) and kept.getMessage() == message and kept.levelname == "ERROR"
    assert failure.exc_info is not None


def test_granians_warning_of_a_worker_it_killed_becomes_ours_the_others_are_dropped() -> None:
    stop = WorkerStopped(seconds=5)
    killed = logging.LogRecord(
        "_granian",
        logging.WARNING,
        __file__,
        1,
        "Killing worker-%s after it refused to gracefully stop",
        (2,),
        None,
    )
    assert stop.filter(killed) and killed.getMessage() == WORKER_CUT_OFF.format(seconds="5")
    assert "5 s after the stop" in killed.getMessage()
    chatter = logging.LogRecord(
        "_granian", logging.WARNING, __file__, 1, "Embedded server is experimental!", (), None
    )
    error = logging.LogRecord(
        "_granian", logging.ERROR, __file__, 1, "Application callable raised", (), None
    )
    assert not stop.filter(chatter) and stop.filter(error)


def delayed_request(
    server: LiveServer, answered: list[BaseException | int], delay_ms: int = 5000
) -> threading.Thread:
    """A request answered after `delay_ms`, started in a thread; its status (or the error) goes into
    `answered`."""

    def slow_request() -> None:
        try:
            answered.append(
                httpx.get(
                    server.base_url + DELAYED,
                    timeout=20,
                    headers={"Authorization": "Bearer demo-user", "Prefer": f"delay={delay_ms}"},
                ).status_code
            )
        except httpx.HTTPError as exc:
            answered.append(exc)

    client = threading.Thread(target=slow_request)
    client.start()
    time.sleep(0.5)  # the request is being answered
    return client


@pytest.mark.parametrize("name", BOTH_SERVERS)
def test_one_ctrl_c_lets_an_open_request_finish_then_exits_0(tmp_path: Path, name: str) -> None:
    server = start_server(tmp_path, "--server", name)
    try:
        answered: list[BaseException | int] = []
        client = delayed_request(server, answered)
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=20) == 0
        client.join(timeout=20)
        assert answered == [200]
        assert CUT_OFF not in server.log() and "Traceback" not in server.log()
    finally:
        stop_server(server)


@pytest.mark.parametrize("name", BOTH_SERVERS)
@pytest.mark.parametrize(
    "sigint_ignored", [False, True], ids=["foreground", "started-in-the-background"]
)
def test_a_second_ctrl_c_cuts_off_an_open_request_with_one_line_and_no_traceback(
    tmp_path: Path, name: str, sigint_ignored: bool
) -> None:
    server = start_server(tmp_path, "--server", name, sigint_ignored=sigint_ignored)
    try:
        answered: list[BaseException | int] = []
        client = delayed_request(server, answered)
        asked = time.monotonic()
        server.process.send_signal(signal.SIGINT)
        time.sleep(0.3)
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=20) == 0
        client.join(timeout=20)
        log = server.log()
        assert CUT_OFF in log, log
        assert "Traceback" not in log and "CancelledError" not in log, log
        # cut off: uvicorn's own 500, or the connection closed
        assert answered and answered[0] != 200
        # not after the request's 5 s delay: the answer it would have had came no sooner (a bound
        # that a busy machine does not race)
        assert time.monotonic() - asked < 5
    finally:
        stop_server(server)


@needs_granian
def test_a_granian_worker_still_answering_5_s_after_ctrl_c_is_stopped_and_the_log_says_so(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path, "--workers", "2", "--server", "granian")
    try:
        answered: list[BaseException | int] = []
        client = delayed_request(server, answered, delay_ms=9000)
        asked = time.monotonic()
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=20) == 0
        client.join(timeout=20)
        # cut off before the request's 9 s delay: its answer would have come no sooner
        assert answered and answered[0] != 200 and time.monotonic() - asked < 9
        log = server.log()
        assert WORKER_CUT_OFF.format(seconds="5") in log, log
        assert "Traceback" not in log and "refused to gracefully stop" not in log, log
    finally:
        stop_server(server)


if sys.platform == "win32":  # pragma: no cover - SIGINT cannot be sent to a process there
    del test_one_ctrl_c_lets_an_open_request_finish_then_exits_0
    del test_a_second_ctrl_c_cuts_off_an_open_request_with_one_line_and_no_traceback
    del test_a_granian_worker_still_answering_5_s_after_ctrl_c_is_stopped_and_the_log_says_so
