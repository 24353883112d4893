"""Stops that cut requests off, each said in one line: a second Ctrl-C (CUT_OFF, under either
server; for uvicorn, a filter of its error log), and a Granian worker stopped before it finished
(WorkerStopped)."""

from __future__ import annotations

import asyncio
import logging

CUT_OFF = (
    "evalmock: stopped at once (Ctrl-C twice): anything still being answered was cut off; "
    "one Ctrl-C lets open requests finish"
)
_LAST_LINE = f"{asyncio.CancelledError.__module__}.{asyncio.CancelledError.__name__}"


def is_cut_off(record: logging.LogRecord) -> bool:
    """Whether `record` reports a task cancelled as the event loop closed after a forced stop:
    uvicorn cancels no task itself, so only the loop's last cancellation, on the interrupt, ends one
    so. A request's task comes as the exception; the lifespan's as the traceback Starlette's router
    wrote into its failure message."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None:
        return isinstance(exc, asyncio.CancelledError) and isinstance(
            exc.__context__, KeyboardInterrupt
        )
    text = str(record.msg)
    return text.rstrip().endswith(_LAST_LINE) and "\nKeyboardInterrupt\n" in text


class ForcedStop(logging.Filter):
    """The first record of a task cut off becomes CUT_OFF, a warning; the others are dropped."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self._said = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not is_cut_off(record):
            return True
        if self._said:
            return False
        self._said = True
        record.msg, record.args, record.exc_info, record.exc_text = CUT_OFF, (), None, None
        record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


WORKER_CUT_OFF = (
    "evalmock: a worker was still answering {seconds} s after the stop, and was stopped: what it "
    "was "
    "answering was cut off"
)
_WORKER_KILLED = "after it refused to gracefully stop"


class WorkerStopped(logging.Filter):
    """For Granian's log at warning level: its warning that it killed a worker still answering
    becomes WORKER_CUT_OFF; its other warnings (about its own settings and modes) are not ours to
    show; errors pass."""

    def __init__(self, seconds: float = 0) -> None:
        super().__init__()
        self.seconds = seconds

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        if _WORKER_KILLED not in record.getMessage():
            return False
        record.msg, record.args = WORKER_CUT_OFF.format(seconds=f"{self.seconds:g}"), ()
        return True
