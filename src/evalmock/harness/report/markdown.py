"""The Markdown report: the run, the verdict, failures first, then warnings, what was not checked,
what passed."""

from __future__ import annotations

import re

from evalmock.contract.client_verdict import ClientVerdict
from evalmock.harness.checks.policy import PASSED, SKIPPED
from evalmock.harness.excerpts import clip
from evalmock.harness.report import client_section
from evalmock.harness.report.run_info import RunInfo
from evalmock.harness.report.view import (
    KIND_WORDS,
    MAX_EXAMPLE_TEXT,
    SECTIONS,
    UNFINISHED_TEXT,
    UNFINISHED_TITLE,
    api_line,
    headline,
    incomplete_intro,
    ordered_rows,
    section_count,
    shown_request,
    throttling_intro,
    throttling_text,
)
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import Finding
from evalmock.harness.results.tally import OFF
from evalmock.nouns import counted


def markdown_header(results: Results, run: RunInfo) -> list[str]:
    """The run's metadata as a two-column table."""
    lines = ["| run | |", "|---|---|"]
    lines += [f"| {label} | `{value}` |" for label, value in run.rows(results)]
    return [*lines, ""]


def render_markdown(
    results: Results,
    *,
    base_url: str,
    run: RunInfo | None = None,
    client: ClientVerdict | None = None,
) -> str:
    """The report; `client`: the client rules' verdict on what the app sent (the proxy's), as its
    own section."""
    run = run or RunInfo(base_url)
    lines = [
        "# evalmock contract report",
        "",
        *markdown_header(results, run),
        f"**{headline(results)}**",
        "",
    ]
    lines += [f"- {api_line(results, api)}" for api in results.apis] + [""]
    if reasons := results.incomplete_reasons():
        lines += ["## Incomplete", "", incomplete_intro(results), ""]
        lines += [f"- {_prose(str(reason))}" for reason in reasons] + [""]
    for outcome, title, intro in SECTIONS:
        findings = results.findings_of(outcome)
        if not findings:
            continue
        lines += [f"## {title} ({section_count(results, outcome)})", "", intro, ""]
        for finding in findings:
            lines += _markdown_finding(finding)
    if (throttling := throttling_text(results)) is not None:
        lines += ["## Throttling", "", throttling_intro(results), "", throttling + ".", ""]
    lines += ["## Not checked", "", "| check | level | why |", "|---|---|---|"]
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == SKIPPED:
                why = "; ".join(f.title for f in results.skips if f.check is t.check)
            elif t.outcome == OFF:
                why = results.policy.why_off(t.check.source)
            else:
                continue
            lines.append(f"| `{api}` `{t.check.name}` | {t.check.level} | {_cell(why)} |")
    lines += [
        "",
        "## Passed",
        "",
        "| check | level | kind | responses or runs | source |",
        "|---|---|---|--:|---|",
    ]
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == PASSED:
                lines.append(
                    f"| `{api}` `{t.check.name}` | {t.check.level} | {KIND_WORDS[t.check.kind]} | "
                    f"{t.passed} "
                    f"| {t.check.source.describe()} |"
                )
    if client is not None:
        lines += ["", *client_section.markdown_section(client)]
    if notes := results.remarks():
        lines += ["", "## Notes", ""] + [f"- {_prose(note)}" for note in notes]
    return "\n".join(lines) + "\n"


def render_unfinished_markdown(crash: str) -> str:
    """The report of an audit that an internal error stopped: that it did not finish, and where."""
    return "\n".join([f"# {UNFINISHED_TITLE}", "", UNFINISHED_TEXT, "", _code(crash), ""])


def _markdown_finding(finding: Finding) -> list[str]:
    check = finding.check
    lines = [
        f"### `{check.name}` ({check.api}, {check.level}): {_prose(finding.stated)}",
        "",
        f"Rule: {check.rule}",
        "",
        f"Source: {finding.source.describe()}",
        "",
    ]
    if finding.shape:
        lines += [
            f"{counted(finding.count, 'response')} of `{finding.shape}`"
            + (f", Schemathesis {finding.code}" if finding.code else "")
            + ".",
            "",
        ]
    for number, example in enumerate(finding.examples, 1):
        lines += [
            f"Example {number}:",
            "",
            *_fenced(clip(example.message, MAX_EXAMPLE_TEXT), "text"),
            "",
        ]
        if example.pointer is not None:
            at, value = _code(example.pointer or "/"), _code(clip(example.value or "", 200))
            lines += [f"At {at}: {value}", ""]
        if example.request is not None:
            lines += [
                f"Request: {_code(shown_request(example.request, with_curl=number == 1))} "
                f"answered "
                f"{example.request.status}.",
                "",
            ]
            if number == 1:
                lines += [*_fenced(example.request.curl, "sh"), ""]
    if finding.count > len(finding.examples):
        lines += [f"… and {finding.count - len(finding.examples)} more.", ""]
    return lines


# What a service sends reaches the report; none of it may end a code block or span early, open raw
# HTML (an <img onerror> runs in a reader's browser) or a link, or break a table.
def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def _fenced(text: str, info: str) -> list[str]:
    """A fenced block that `text` cannot close: a fence longer than any run of backticks in it."""
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return [f"{fence}{info}", text, fence]


def _code(text: str) -> str:
    """An inline code span that `text` cannot close, on one line (CommonMark 6.1)."""
    text = " ".join(text.splitlines()) if "\n" in text or "\r" in text else text
    if "`" not in text:
        return f"`{text}`"
    ticks = "`" * (_longest_run(text, "`") + 1)
    return f"{ticks} {text} {ticks}"


def _prose(text: str) -> str:
    """Text outside code, on one line: no raw HTML, no link."""
    return " ".join(text.splitlines()).replace("<", "&lt;").replace("](", "]\\(")


def _cell(text: str) -> str:
    """`_prose` in a table cell: a `|` is the cell's, not a new column."""
    return _prose(text).replace("|", "\\|")
