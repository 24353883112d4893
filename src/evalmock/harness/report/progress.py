"""The live progress display: a rich spinner on a terminal, plain lines otherwise, nothing when
quiet."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from evalmock.harness.run.engine import Reporter
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted

# A log without a line for this long looks hung, and CI services stop a job that prints nothing for
# 10 minutes; an audit of a slow service (300 ms an answer) runs for minutes.
HEARTBEAT_S = 30.0

# Answers an audit of `evalmock serve` (its defaults) gets, per API, with Schemathesis and without
# (measured: 1,650 and 1,328; 177 and 127): what an estimate of a whole audit starts from, until
# the audit has had more.
ANSWERS = {"test-set": (1_650, 1_330), "gradient": (180, 130)}
MIN_ANSWERS = 5  # answers before the pace is told
SLOW_ANSWER_S = 0.25  # a mean answer time from which more workers are worth naming
MORE_WORKERS = 8  # the workers named (answers waiting on a slow service overlap)


def expected_answers(apis: tuple[str, ...], *, fuzz: bool) -> int:
    """About how many answers an audit of `apis` gets, as one of the mock does."""
    return sum(ANSWERS.get(api, ANSWERS["test-set"])[0 if fuzz else 1] for api in apis)


def about(seconds: float) -> str:
    """A duration as an estimate is said: "about 20 minutes", "about an hour", "about 3 hours"."""
    minutes = seconds / 60
    if minutes < 1.5:
        return "about a minute" if minutes >= 0.5 else "under a minute"
    if minutes < 50:
        return f"about {minutes:.0f} minutes"
    if minutes < 90:
        return "about an hour"
    return f"about {minutes / 60:.0f} hours"


class Pace:
    """How fast the service answers, and what that makes of the whole audit: its mean answer time,
    an estimate of the audit at this pace with its workers, and more workers where they would
    help."""

    def __init__(self, workers: int = 1, expected: int = 0) -> None:
        self.workers = workers
        self.expected = expected
        self.answers = 0
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        self.answers += 1
        self.seconds += max(0.0, seconds)

    def text(self) -> str | None:
        """`120 answers so far, 2.0 s each on average: …`; None before MIN_ANSWERS."""
        if self.answers < MIN_ANSWERS:
            return None
        mean = self.seconds / self.answers
        each = f"{mean * 1000:.0f} ms" if mean < 0.1 else f"{mean:.1f} s"
        said = f"{self.answers} answers so far, {each} each on average"
        if self.expected:
            expected = max(self.expected, self.answers)
            workers = counted(self.workers, "worker")
            said += (
                f": the whole audit (about {expected:,} answers) may take "
                f"{about(expected * mean / self.workers)} at this pace with {workers}"
            )
            if mean >= SLOW_ANSWER_S and self.workers < MORE_WORKERS:
                said += (
                    f"; --workers {MORE_WORKERS} would take about "
                    f"{about(expected * mean / MORE_WORKERS).removeprefix('about ')}"
                )
        return said


class PlainReporter(Reporter):
    """One line per API done (for logs and CI), and a line of tasks done at most every
    HEARTBEAT_S."""

    def __init__(
        self,
        redactor: Redactor,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        pace: Pace | None = None,
    ) -> None:
        self.redactor = redactor
        self.stream = stream or sys.stderr
        self.clock = clock
        self.pace = pace or Pace()
        self._last = clock()
        self._lock = threading.Lock()
        self._tasks: tuple[int, int, str] | None = None  # the last task told done

    def done(self, count: int, total: int, text: str) -> None:
        with self._lock:
            self._tasks = (count, total, text)
            self._beat()

    def answered(self, seconds: float) -> None:
        # a slow service may finish no task for minutes: its answers keep the log going
        with self._lock:
            self.pace.add(seconds)
            self._beat()

    def _beat(self) -> None:
        """A line of progress, if none was printed for HEARTBEAT_S."""
        if self.clock() - self._last < HEARTBEAT_S:
            return
        self._last = self.clock()
        parts = []
        if self._tasks is not None:
            count, total, text = self._tasks
            parts.append(f"{count} of {total} tasks done (last: {self.redactor.text(text)})")
        if (pace := self.pace.text()) is not None:
            parts.append(pace)
        if parts:
            print(f"{'; '.join(parts)} …", file=self.stream, flush=True)

    def finish(self, text: str) -> None:
        with self._lock:
            self._last = self.clock()
            print(self.redactor.text(text), file=self.stream, flush=True)


class LiveReporter(Reporter):
    """A rich status line that follows the audit on a terminal."""

    def __init__(
        self, redactor: Redactor, stream: TextIO | None = None, *, pace: Pace | None = None
    ) -> None:
        from rich.console import Console

        self.redactor = redactor
        self.console = Console(file=stream or sys.stderr)
        self.pace = pace or Pace()
        self._lock = threading.Lock()
        self._tasks = "starting"
        self._status = self.console.status(self._tasks)
        self._status.start()

    def done(self, count: int, total: int, text: str) -> None:
        with self._lock:
            self._tasks = f"{count}/{total} {self.redactor.text(text)}"
            self._show()

    def answered(self, seconds: float) -> None:
        with self._lock:
            self.pace.add(seconds)
            if self.pace.answers % MIN_ANSWERS == 0:
                self._show()

    def _show(self) -> None:
        pace = self.pace.text()
        self._status.update(self._tasks if pace is None else f"{self._tasks} · {pace}")

    def finish(self, text: str) -> None:
        self.console.print(f"[green]✓[/green] {self.redactor.text(text)}", highlight=False)

    def close(self) -> None:
        self._status.stop()


def make_reporter(
    redactor: Redactor, *, quiet: bool, stream: TextIO | None = None, pace: Pace | None = None
) -> Reporter:
    stream = stream or sys.stderr
    if quiet:
        return Reporter()
    if stream.isatty():
        return LiveReporter(redactor, stream, pace=pace)
    return PlainReporter(redactor, stream, pace=pace)
