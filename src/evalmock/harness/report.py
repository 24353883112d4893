"""Outputs of an audit: the summary table, JUnit XML, and a Markdown or HTML report of each finding."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from evalmock.harness.redact import Redactor
from evalmock.harness.results import FAILED, PASSED, SKIPPED, Finding, Results, Row

SOURCE_WORDS = {"schemathesis": "Schemathesis", "response": "every response", "scenario": "scenario"}


def verdict(results: Results) -> str:
    return "CONFORMS" if results.conforms else "VIOLATIONS FOUND"


def print_summary(results: Results, redactor: Redactor, stream: TextIO) -> None:
    """The operation × check table and a one-line verdict (rich renders plain text when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream, width=160 if not stream.isatty() else None, highlight=False)
    colour = {PASSED: "green", FAILED: "red", SKIPPED: "yellow"}
    rows = results.rows()
    longest = max((len(row.check) for row in rows), default=5)
    for operation in dict.fromkeys(row.operation for row in rows):
        table = Table(title=redactor.text(operation), title_justify="left")
        table.add_column("check", no_wrap=True, min_width=longest)
        table.add_column("source", no_wrap=True)
        for column in ("passed", "failed", "skipped"):
            table.add_column(column, justify="right")
        table.add_column("result", no_wrap=True)
        for row in rows:
            if row.operation == operation:
                paint = colour[row.status]
                table.add_row(row.check, SOURCE_WORDS[row.source], str(row.passed), str(row.failed), str(row.skipped),
                              f"[{paint}]{row.status}[/{paint}]")
        console.print(table)
    for finding in results.failures:
        first = finding.message.split("\n", 1)[0]
        console.print(f"[red]FAILED[/red] {finding.check} ({finding.operation}): {redactor.text(first)}")
    for note in results.notes:
        console.print(f"note: {redactor.text(note)}")
    totals = results.totals()
    console.print(
        f"{verdict(results)}: {totals[PASSED]} checks passed, {totals[FAILED]} failed, {totals[SKIPPED]} skipped"
    )


# -- JUnit ------------------------------------------------------------------------------------------------
def _finding_text(finding: Finding) -> str:
    lines = [f"rule: {finding.rule}", "", finding.message]
    if finding.code:
        lines.insert(0, f"code: {finding.code}")
    if finding.repeats > 1:
        lines.append(f"(seen {finding.repeats} times)")
    if finding.request is not None:
        lines += ["", f"request: {finding.request.method} {finding.request.url} -> {finding.request.status}",
                  f"reproduce: {finding.request.curl}"]
        if finding.request.response_excerpt:
            lines.append(f"response: {finding.request.response_excerpt}")
    return "\n".join(lines)


def write_junit(results: Results, path: str | Path, redactor: Redactor) -> None:
    """One <testsuite> per API, one <testcase> per operation × check."""
    rows = results.rows()
    findings = _findings_by_key(results.findings)
    root = ET.Element("testsuites", name="evalmock contract")
    for api in dict.fromkeys(row.api for row in rows):
        api_rows = [row for row in rows if row.api == api]
        suite = ET.SubElement(
            root, "testsuite", name=api, tests=str(len(api_rows)),
            failures=str(sum(row.status == FAILED for row in api_rows)),
            skipped=str(sum(row.status == SKIPPED for row in api_rows)), errors="0",
        )
        for row in api_rows:
            case = ET.SubElement(suite, "testcase", classname=f"{api}.{row.operation}", name=row.check)
            matching = findings.get((row.api, row.operation, row.check), [])
            if row.status == FAILED:
                failed = [f for f in matching if f.status == FAILED]
                first = failed[0].message.split("\n", 1)[0] if failed else "failed"
                element = ET.SubElement(case, "failure", message=redactor.text(first),
                                        type=(failed[0].code or failed[0].source) if failed else "failure")
                element.text = redactor.text("\n\n".join(_finding_text(f) for f in failed))
            elif row.status == SKIPPED:
                skipped = [f for f in matching if f.status == SKIPPED]
                ET.SubElement(case, "skipped", message=redactor.text(skipped[0].message if skipped else "skipped"))
    ET.indent(root)
    Path(path).write_text(redactor.text(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n",
                          encoding="utf-8")


def _findings_by_key(findings: Iterable[Finding]) -> dict[tuple[str, str, str], list[Finding]]:
    grouped: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        grouped.setdefault((finding.api, finding.operation, finding.check), []).append(finding)
    return grouped


# -- Markdown and HTML ------------------------------------------------------------------------------------
REPORT_FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def report_format(path: str | Path) -> str | None:
    """`markdown` or `html` from the report file's suffix; None for any other suffix."""
    return REPORT_FORMATS.get(Path(path).suffix.lower())


def write_report(results: Results, path: str | Path, *, base_url: str, redactor: Redactor) -> None:
    """A Markdown report (`.md`) or an HTML one (`.html`/`.htm`), chosen by the file's suffix."""
    path = Path(path)
    if report_format(path) == "html":
        text = render_html(results, base_url=base_url)
    else:
        text = render_markdown(results, base_url=base_url)
    path.write_text(redactor.text(text), encoding="utf-8")


def _table_rows(rows: list[Row]) -> list[str]:
    lines = ["| operation | check | source | passed | failed | skipped | result |", "|---|---|---|--:|--:|--:|---|"]
    for row in rows:
        lines.append(
            f"| `{row.operation}` | `{row.check}` | {SOURCE_WORDS[row.source]} | {row.passed} | {row.failed} "
            f"| {row.skipped} | {'**failed**' if row.status == FAILED else row.status} |"
        )
    return lines


def render_markdown(results: Results, *, base_url: str) -> str:
    totals = results.totals()
    lines = [
        "# evalmock contract report",
        "",
        f"Target: `{base_url}`",
        "",
        f"**{verdict(results)}**: {totals[PASSED]} checks passed, {totals[FAILED]} failed, "
        f"{totals[SKIPPED]} skipped.",
        "",
        "## Summary",
        "",
        *_table_rows(results.rows()),
        "",
    ]
    if results.failures:
        lines += ["## Failures", ""]
        for finding in results.failures:
            lines += [f"### `{finding.check}` on `{finding.operation}`", ""]
            lines += ["Rule: " + finding.rule.replace("\n", " "), ""]
            if finding.code:
                lines += [f"Schemathesis code: {finding.code}", ""]
            lines += ["```text", finding.message, "```", ""]
            if finding.repeats > 1:
                lines += [f"Seen {finding.repeats} times.", ""]
            if finding.request is not None:
                request = finding.request
                lines += [f"Request: `{request.method} {request.url}` answered {request.status}.", ""]
                lines += ["Reproduce:", "", "```sh", request.curl, "```", ""]
                if request.response_excerpt:
                    lines += ["Response (start):", "", "```text", request.response_excerpt, "```", ""]
    if results.skips:
        lines += ["## Skipped", ""]
        for finding in results.skips:
            lines.append(f"- `{finding.check}` on `{finding.operation}`: {finding.message}")
        lines.append("")
    if results.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in results.notes] + [""]
    return "\n".join(lines)


def render_html(results: Results, *, base_url: str) -> str:
    e = html.escape
    totals = results.totals()
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>evalmock contract report</title>',
        "<style>body{font-family:sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}"
        ".failed{color:#b00;font-weight:bold}.skipped{color:#a60}.passed{color:#070}"
        "pre{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap}</style></head><body>",
        "<h1>evalmock contract report</h1>",
        f"<p>Target: <code>{e(base_url)}</code></p>",
        f"<p><strong>{e(verdict(results))}</strong>: {totals[PASSED]} checks passed, {totals[FAILED]} failed, "
        f"{totals[SKIPPED]} skipped.</p>",
        "<h2>Summary</h2><table><tr><th>operation</th><th>check</th><th>source</th><th>passed</th>"
        "<th>failed</th><th>skipped</th><th>result</th></tr>",
    ]
    for row in results.rows():
        parts.append(
            f"<tr><td><code>{e(row.operation)}</code></td><td><code>{e(row.check)}</code></td>"
            f"<td>{e(SOURCE_WORDS[row.source])}</td><td>{row.passed}</td><td>{row.failed}</td><td>{row.skipped}</td>"
            f'<td class="{row.status}">{row.status}</td></tr>'
        )
    parts.append("</table>")
    if results.failures:
        parts.append("<h2>Failures</h2>")
        for finding in results.failures:
            parts.append(f"<h3><code>{e(finding.check)}</code> on <code>{e(finding.operation)}</code></h3>")
            parts.append(f"<p>Rule: {e(finding.rule)}</p>")
            if finding.code:
                parts.append(f"<p>Schemathesis code: {e(finding.code)}</p>")
            parts.append(f"<pre>{e(finding.message)}</pre>")
            if finding.request is not None:
                request = finding.request
                parts.append(f"<p>Request: <code>{e(request.method)} {e(request.url)}</code> answered "
                             f"{request.status}.</p><p>Reproduce:</p><pre>{e(request.curl)}</pre>")
                if request.response_excerpt:
                    parts.append(f"<p>Response (start):</p><pre>{e(request.response_excerpt)}</pre>")
    if results.skips:
        parts.append("<h2>Skipped</h2><ul>")
        parts += [f"<li><code>{e(f.check)}</code> on <code>{e(f.operation)}</code>: {e(f.message)}</li>"
                  for f in results.skips]
        parts.append("</ul>")
    if results.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in results.notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
