"""The audit's summary on a terminal or in a log: a table of checks per API, each finding, the
verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from evalmock.harness.checks.policy import FAILED, PASSED, SKIPPED, WARNED
from evalmock.harness.excerpts import printable
from evalmock.harness.report.view import (
    KIND_WORDS,
    UNWRAPPED_WIDTH,
    api_line,
    headline,
    ordered_rows,
    policy_line,
    throttling_text,
)
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.tally import OFF
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted

if TYPE_CHECKING:
    from rich.console import Console


def print_summary(results: Results, redactor: Redactor, stream: TextIO) -> None:
    """Per API a table of checks (what needs doing first), then each failure and warning, then the
    verdict."""
    from rich.table import Table

    console = summary_console(stream)
    colour = {PASSED: "green", FAILED: "red", WARNED: "yellow", SKIPPED: "yellow", OFF: "dim"}
    for api in results.apis:
        table = Table(title=api_line(results, api), title_justify="left")
        for column in ("check", "level", "kind"):
            table.add_column(column, no_wrap=True)
        for column in ("passed", "failed", "warned", "skipped"):
            table.add_column(column, justify="right")
        table.add_column("result", no_wrap=True)
        for t in ordered_rows(results, api):
            if t.outcome in (SKIPPED, OFF):
                continue  # folded by reason below the table: many rows saying one thing
            paint = colour[t.outcome]
            table.add_row(
                t.check.name,
                t.check.level.value,
                KIND_WORDS[t.check.kind],
                str(t.passed),
                str(t.failed),
                str(t.warned),
                str(t.skipped),
                f"[{paint}]{t.outcome}[/{paint}]",
            )
        console.print(table)
        for outcome, why, names in not_checked(results, api):
            console.print(
                f"{api}: {counted(len(names), 'check')} {outcome}: {printable(redactor.text(why))} "
                f"({', '.join(names)})",
                markup=False,
            )
    for finding in [*results.failures, *results.warnings]:
        word = "FAILED" if finding.outcome == FAILED else "WARNING"
        console.print(
            f"{word} {finding.check.name} [{finding.check.level}] ({finding.count}× "
            f"{finding.shape}): "
            f"{printable(redactor.text(finding.stated))}",
            markup=False,
        )
    for reason in results.incomplete_reasons():
        console.print(f"incomplete: {printable(redactor.text(str(reason)))}", markup=False)
    for note in results.remarks():
        console.print(f"note: {printable(redactor.text(note))}", markup=False)
    if (throttling := throttling_text(results)) is not None:
        console.print(f"throttling (the service's, not a rule): {throttling}", markup=False)
    console.print(f"{headline(results)} ({policy_line(results)})", markup=False)


def not_checked(results: Results, api: str) -> list[tuple[str, str, list[str]]]:
    """The checks of `api` skipped or off, folded by why: (outcome, why, their names), the most
    checks first."""
    folded: dict[tuple[str, str], list[str]] = {}
    for t in ordered_rows(results, api):
        if t.outcome == SKIPPED:
            why = "; ".join(f.title for f in results.skips if f.check is t.check) or "not run"
        elif t.outcome == OFF:
            why = results.policy.why_off(t.check.source)
        else:
            continue
        folded.setdefault((t.outcome, why), []).append(t.check.name)
    return sorted(
        ((outcome, why, names) for (outcome, why), names in folded.items()),
        key=lambda row: -len(row[2]),
    )


def summary_console(stream: TextIO) -> Console:
    """A terminal's own width; anywhere else (a log, a pipe to grep) no wrapping at all, so each
    line is whole."""
    from rich.console import Console

    if stream.isatty():
        return Console(file=stream, highlight=False)
    return Console(file=stream, width=UNWRAPPED_WIDTH, soft_wrap=True, highlight=False)


def summary_text(results: Results) -> str:
    """The verdict in a few plain lines: headline, each API, why incomplete, and each failure and
    warning."""
    lines = [headline(results), *(api_line(results, api) for api in results.apis)]
    lines += [f"incomplete: {reason}" for reason in results.incomplete_reasons()]
    if (throttling := throttling_text(results)) is not None:
        lines.append(f"throttling (the service's, not a rule): {throttling}")
    for finding in [*results.failures, *results.warnings]:
        word = "FAILED" if finding.outcome == FAILED else "WARNING"
        lines.append(
            f"{word} {finding.check.name} [{finding.check.level}] ({finding.count}× "
            f"{finding.shape}): "
            f"{finding.stated}"
        )
    return "\n".join(printable(line) for line in lines)
