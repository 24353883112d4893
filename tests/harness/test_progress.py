"""The audit's progress in a log: every task told done once, as it finishes, and a plain log given a
line of tasks done at most every 30 seconds (a CI job that prints nothing for minutes looks hung,
and some services stop it); on a terminal, the status line shows the tasks done and the pace."""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any

import pytest

from evalmock.harness.checks.registry import scenario_checks
from evalmock.harness.report.progress import (
    HEARTBEAT_S,
    MIN_ANSWERS,
    LiveReporter,
    Pace,
    PlainReporter,
    expected_answers,
)
from evalmock.harness.run.engine import Reporter, run_audit
from evalmock.harness.run.options import plan_audit
from evalmock.harness.secrets.redactor import Redactor


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_plain_log_says_how_many_tasks_are_done_at_most_every_30_seconds() -> None:
    clock, out = Clock(), io.StringIO()
    reporter = PlainReporter(Redactor("tok-secret-123456"), out, clock=clock)
    reporter.done(1, 40, "test-set: walk")
    clock.now += HEARTBEAT_S - 1
    reporter.done(2, 40, "test-set: walk")
    assert out.getvalue() == ""  # a fast audit's log is its stage lines alone
    clock.now += 1
    reporter.done(3, 40, "test-set: a probe with tok-secret-123456")
    reporter.done(4, 40, "test-set: filters")
    assert out.getvalue() == "3 of 40 tasks done (last: test-set: a probe with $EVALMOCK_TOKEN) …\n"
    clock.now += HEARTBEAT_S - 1
    # a line of its own: the next heartbeat is counted from it
    reporter.finish("test-set: 40 tasks done")
    clock.now += HEARTBEAT_S - 1
    reporter.done(5, 40, "gradient: versions")
    assert out.getvalue().splitlines()[-1] == "test-set: 40 tasks done"


class Recording(Reporter):
    def __init__(self) -> None:
        self.told: list[tuple[int, int, str]] = []

    def done(self, count: int, total: int, text: str) -> None:
        self.told.append((count, total, text))


def test_every_task_of_the_audit_is_told_done_once_as_one_of_all(live_server: Any) -> None:
    audit = plan_audit(
        live_server.base_url,
        targets=live_server.targets_path,
        token="demo-user",
        fuzz=False,
        workers=2,
    )
    chosen = [check.name for api in audit.apis for check in scenario_checks(api)][:4]
    reporter = Recording()
    run_audit(dataclasses.replace(audit, only=frozenset(chosen)), reporter)
    total = len(reporter.told)
    assert total >= len(chosen)
    assert sorted(count for count, _, _ in reporter.told) == list(range(1, total + 1))
    assert {every for _, every, _ in reporter.told} == {total}
    assert all(text.split(": ", 1)[0] in audit.apis for _, _, text in reporter.told)


def test_a_slow_service_s_log_tells_the_mean_answer_time_the_whole_audit_and_more_workers() -> None:
    # 2 s an answer, one worker: the log says the pace, an estimate of the whole audit as long as
    # one of the mock, and the workers that would shorten it, though no task has finished yet.
    clock, out = Clock(), io.StringIO()
    pace = Pace(1, expected_answers(("test-set", "gradient"), fuzz=True))
    reporter = PlainReporter(Redactor(), out, clock=clock, pace=pace)
    for _ in range(15):
        clock.now += 2.0
        reporter.answered(2.0)
    [line] = out.getvalue().splitlines()
    assert line == (
        "15 answers so far, 2.0 s each on average: the whole audit (about 1,830 answers) may take "
        "about an hour at this pace with 1 worker; --workers 8 would take about 8 minutes …"
    )


def test_a_fast_service_s_pace_names_no_more_workers_and_a_few_answers_no_pace() -> None:
    pace = Pace(1, expected_answers(("test-set",), fuzz=False))
    for _ in range(MIN_ANSWERS - 1):
        pace.add(0.004)
    assert pace.text() is None
    pace.add(0.004)
    assert pace.text() == (
        "5 answers so far, 4 ms each on average: the whole audit (about 1,330 answers) may take "
        "under a minute at this pace with 1 worker"
    )


class Timing(Reporter):
    def __init__(self) -> None:
        self.took: list[float] = []

    def answered(self, seconds: float) -> None:
        self.took.append(seconds)


def test_every_answer_of_the_audit_is_timed_for_the_pace_schemathesis_s_too(
    live_server: Any,
) -> None:
    audit = plan_audit(
        live_server.base_url,
        targets=live_server.targets_path,
        token="demo-user",
        apis=("gradient",),
        max_examples=5,
    )
    reporter = Timing()
    results = run_audit(audit, reporter)
    # every answer the audit counted (its throttling's denominator) was timed, and none took no time
    assert len(reporter.took) == results.throttling.shares.answers > 20
    assert all(seconds > 0 for seconds in reporter.took)


class Terminal(io.StringIO):
    """A terminal as rich sees one: what it writes is kept, escape codes and all."""

    def isatty(self) -> bool:
        return True


ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPINNER = re.compile(r"^\S+ ")  # the spinner's frame, which depends on when it was drawn


def last_status(terminal: Terminal) -> str:
    """The status line as it was last drawn (each drawing starts on a fresh line or a return)."""
    drawn = [part for part in re.split(r"[\r\n]", ESCAPE.sub("", terminal.getvalue())) if part]
    return SPINNER.sub("", drawn[-1]) if drawn else ""


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    # wide enough that rich draws the whole line on one row
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)
    return Terminal()


def test_a_slow_service_s_status_line_shows_the_pace_the_estimate_and_more_workers(
    terminal: Terminal,
) -> None:
    pace = Pace(1, expected_answers(("test-set", "gradient"), fuzz=True))
    reporter = LiveReporter(Redactor("tok-secret-123456"), terminal, pace=pace)
    reporter.done(3, 40, "test-set: a probe with tok-secret-123456")
    for _ in range(15):
        reporter.answered(2.0)
    reporter.close()
    assert last_status(terminal) == (
        "3/40 test-set: a probe with $EVALMOCK_TOKEN · 15 answers so far, 2.0 s each on average: "
        "the whole audit (about 1,830 answers) may take about an hour at this pace with 1 worker; "
        "--workers 8 would take about 8 minutes"
    )
    assert "tok-secret-123456" not in terminal.getvalue()


def test_a_fast_service_s_status_line_names_no_workers_and_a_few_answers_no_pace(
    terminal: Terminal,
) -> None:
    pace = Pace(2, expected_answers(("gradient",), fuzz=False))
    reporter = LiveReporter(Redactor(), terminal, pace=pace)
    reporter.done(1, 9, "gradient: versions")
    for _ in range(MIN_ANSWERS - 1):
        reporter.answered(0.004)
    reporter.done(2, 9, "gradient: versions")
    reporter.close()
    assert last_status(terminal) == "2/9 gradient: versions"

    terminal = Terminal()
    reporter = LiveReporter(Redactor(), terminal, pace=Pace(2, 130))
    reporter.done(2, 9, "gradient: versions")
    for _ in range(2 * MIN_ANSWERS):
        reporter.answered(0.004)
    reporter.finish("gradient: 9 tasks done, 0 failed findings so far")
    reporter.close()
    said = ESCAPE.sub("", terminal.getvalue())
    assert "✓ gradient: 9 tasks done, 0 failed findings so far" in said
    assert last_status(terminal) == (
        "2/9 gradient: versions · 10 answers so far, 4 ms each on average: the whole audit "
        "(about 130 answers) may take under a minute at this pace with 2 workers"
    )
