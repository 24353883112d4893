"""The audit's progress in a log: every task told done once, as it finishes, and a plain log given a
line of tasks done at most every 30 seconds (a CI job that prints nothing for minutes looks hung,
and some services stop it)."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

from evalmock.harness.checks.registry import scenario_checks
from evalmock.harness.report.progress import HEARTBEAT_S, PlainReporter
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
