"""The HTML report: the Markdown report's sections as one page, every value from the service
escaped."""

from __future__ import annotations

import html
import re
from importlib import resources

from evalmock.contract.client_verdict import ClientVerdict
from evalmock.contract.sources import Source
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
from evalmock.harness.results.verdict import Verdict
from evalmock.nouns import counted


def prose(text: str) -> str:
    """Text for the page, escaped, a `quoted` command or name set as code (as the Markdown report
    shows it), each command-line option kept on one line: a browser breaks lines at hyphens, and
    `--rate-` at the end of a line with `limit` on the next reads as another option."""
    return _OPTION.sub(
        r'<span class="flag">\1</span>', _CODE_SPAN.sub(r"<code>\1</code>", html.escape(text))
    )


def name_html(name: str) -> str:
    """A check's name, escaped, that may break after each underscore (a table of long names then
    fits a tablet's width) and is copied as written: <wbr> adds no character."""
    return html.escape(name).replace("_", "_<wbr>")


def source_html(source: Source) -> str:
    """A rule's source for the page: its level, then each quote and the reason on a line of its
    own (run together in one paragraph, a reader cannot tell where one quote ends and the next
    begins)."""
    e = html.escape
    lines = [f'<span class="quote">{e(str(quote))}</span>' for quote in source.quotes]
    if source.reason:
        dash = "— " if source.quotes else ""
        lines.append(f'<span class="reason">{dash}{e(source.reason)}</span>')
    return f"{e(str(source.level))}: {''.join(lines)}"


_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def report_css() -> str:
    """The page's style (report.css beside this module), one line: the report is a single
    self-contained file."""
    return _CSS


def _load_css() -> str:
    text = (resources.files(__package__) / "report.css").read_text(encoding="utf-8")
    rules = (line.strip() for line in text.splitlines())
    return "".join(line for line in rules if not (line.startswith("/*") and line.endswith("*/")))


_CSS = _load_css()


def html_header(results: Results, run: RunInfo) -> str:
    """The run's metadata as a definition list."""
    e = html.escape
    return (
        '<dl class="run">'
        + "".join(
            f"<dt>{e(label)}</dt><dd><code>{e(value)}</code></dd>"
            for label, value in run.rows(results)
        )
        + "</dl>"
    )


def render_html(
    results: Results,
    *,
    base_url: str,
    run: RunInfo | None = None,
    client: ClientVerdict | None = None,
) -> str:
    """The report; `client`: the client rules' verdict on what the app sent (the proxy's), as its
    own section."""
    run = run or RunInfo(base_url)
    parts = _page_top(results, run)
    parts += _finding_sections(results)
    parts.append(_not_checked(results))
    parts.append(_passed(results))
    if client is not None:
        parts.append(client_section.html_section(client))
    if notes := results.remarks():
        parts.append(
            "<h2>Notes</h2><ul>" + "".join(f"<li>{prose(n)}</li>" for n in notes) + "</ul>"
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def render_unfinished_html(crash: str) -> str:
    """The report of an audit that an internal error stopped: that it did not finish, and where."""
    e = html.escape
    return (
        "\n".join(
            [
                *_head(UNFINISHED_TITLE),
                f"<h1>{e(UNFINISHED_TITLE)}</h1>",
                f'<p class="verdict warned">{e(UNFINISHED_TEXT)}</p>',
                f"<p><code>{e(crash)}</code></p>",
                "</body></html>",
            ]
        )
        + "\n"
    )


def _head(title: str) -> list[str]:
    return [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width">'
        f"<title>{html.escape(title)}</title>",
        f"<style>{report_css()}</style></head><body>",
    ]


def _page_top(results: Results, run: RunInfo) -> list[str]:
    """The page's head, the run's metadata, the verdict and a line per API."""
    e = html.escape
    verdict_class = {
        Verdict.VIOLATIONS: "failed",
        Verdict.INCOMPLETE: "warned",
        Verdict.CONFORMS: "passed",
    }
    return [
        *_head("evalmock contract report"),
        "<h1>evalmock contract report</h1>",
        html_header(results, run),
        f'<p class="verdict {verdict_class[results.verdict]}">{e(headline(results))}</p>',
        "<ul>"
        + "".join(f"<li>{prose(api_line(results, api))}</li>" for api in results.apis)
        + "</ul>",
    ]


def _finding_sections(results: Results) -> list[str]:
    """Why the audit is incomplete, a section per outcome with its findings, and the throttling."""
    parts: list[str] = []
    if reasons := results.incomplete_reasons():
        parts.append(
            f"<h2>Incomplete</h2><p>{prose(incomplete_intro(results))}</p><ul>"
            + "".join(f"<li>{prose(str(r))}</li>" for r in reasons)
            + "</ul>"
        )
    for outcome, title, intro in SECTIONS:
        findings = results.findings_of(outcome)
        if not findings:
            continue
        parts.append(f"<h2>{title} ({section_count(results, outcome)})</h2><p>{prose(intro)}</p>")
        for finding in findings:
            parts.append(_html_finding(finding))
    if (throttling := throttling_text(results)) is not None:
        parts.append(
            f"<h2>Throttling</h2><p>{prose(throttling_intro(results))}</p><p>{prose(throttling)}.</p>"
        )
    return parts


def _not_checked(results: Results) -> str:
    """The checks skipped or turned off, each with why."""
    e = html.escape
    not_checked: list[tuple[str, ...]] = []
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == SKIPPED:
                why = "; ".join(f.title for f in results.skips if f.check is t.check)
            elif t.outcome == OFF:
                why = results.policy.why_off(t.check.source)
            else:
                continue
            not_checked.append(
                (
                    e(api),
                    f"<code>{name_html(t.check.name)}</code>",
                    str(t.check.level),
                    f'<span class="{t.outcome}">{prose(why)}</span>',
                )
            )
    return "<h2>Not checked</h2>" + _html_table(("API", "check", "level", "why"), not_checked)


def _passed(results: Results) -> str:
    """The checks that passed, with what they judged and where their rule comes from."""
    e = html.escape
    passed = [
        (
            e(api),
            f"<code>{name_html(t.check.name)}</code>",
            str(t.check.level),
            KIND_WORDS[t.check.kind],
            str(t.passed),
            f'<span class="source">{source_html(t.check.source)}</span>',
        )
        for api in results.apis
        for t in ordered_rows(results, api)
        if t.outcome == PASSED
    ]
    return "<h2>Passed</h2>" + _html_table(
        ("API", "check", "level", "kind", "responses or runs", "source"), passed
    )


def _html_table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A table whose cells carry their column's name, so that a phone's width shows each row as a
    card."""
    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"
    body = "".join(
        "<tr>"
        + "".join(
            f'<td data-label="{html.escape(h)}">{cell}</td>'
            for h, cell in zip(headers, row, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{head}{body}</table>"


def _html_finding(finding: Finding) -> str:
    e = html.escape
    check = finding.check
    parts = [
        f'<div class="finding finding-{finding.outcome}"><h3><code>{name_html(check.name)}</code> '
        f'<span class="level">{e(check.api)} · {check.level}</span>'
        f'<span class="stated">{e(finding.stated)}</span></h3>',
        f"<p>Rule: {prose(check.rule)}</p>",
        f'<p class="source">Source: {source_html(finding.source)}</p>',
    ]
    if finding.shape:
        code = f", Schemathesis {e(finding.code)}" if finding.code else ""
        parts.append(
            f"<p>{counted(finding.count, 'response')} of <code>{e(finding.shape)}</code>{code}.</p>"
        )
    for number, example in enumerate(finding.examples, 1):
        parts.append(
            f"<p>Example {number}:</p><pre>{e(clip(example.message, MAX_EXAMPLE_TEXT))}</pre>"
        )
        if example.pointer is not None:
            parts.append(
                f"<p>At <code>{e(example.pointer or '/')}</code>: "
                f"<code>{e(clip(example.value or '', 200))}"
                "</code></p>"
            )
        if example.request is not None:
            shown = shown_request(example.request, with_curl=number == 1)
            parts.append(
                f"<p>Request: <code>{e(shown)}</code> answered {example.request.status}.</p>"
            )
            if number == 1:
                parts.append(f"<pre>{e(example.request.curl)}</pre>")
    if finding.count > len(finding.examples):
        parts.append(f"<p>… and {finding.count - len(finding.examples)} more.</p>")
    parts.append("</div>")
    return "".join(parts)
