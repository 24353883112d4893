"""Outputs of an audit: the terminal summary, JUnit XML, and a Markdown or HTML report that leads with failures.

Every output says each check's level and source. Findings come in the order of what needs doing: failures,
then warnings (inferred rules), then what was not checked (skipped, with why), then what passed.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import parse_qs, urlsplit

from evalmock.harness.attribution import carries_a_cursor
from evalmock.harness.outcomes import UNJUDGED_PREFIX, clip
from evalmock.harness.policy import FAILED, PASSED, SKIPPED, WARNED
from evalmock.harness.redact import Redactor
from evalmock.harness.results import OFF, Finding, Results, Tally, Verdict
from evalmock.harness.run_info import RunInfo
from evalmock.whole_file import write_whole

if TYPE_CHECKING:
    from rich.console import Console

KIND_WORDS = {"schemathesis": "Schemathesis", "response": "every response", "scenario": "scenario"}
OUTCOME_ORDER = {FAILED: 0, WARNED: 1, SKIPPED: 2, PASSED: 3, OFF: 4}
MAX_JUNIT_TEXT = 4000  # characters of one JUnit failure body, whatever the number of responses
MAX_EXAMPLE_TEXT = 700
UNWRAPPED_WIDTH = 100_000  # columns of the summary when it goes to a file or pipe: wide enough never to wrap


def headline(results: Results) -> str:
    """The verdict and how many checks ended each way; failed and warned with their findings, in the very words
    of the sections' titles, so that the two always agree."""
    counts = results.counts()
    return (f"{results.verdict.name}: {counts[FAILED]} checks failed{_findings(results, FAILED)}, "
            f"{counts[WARNED]} warned{_findings(results, WARNED)}, {counts[PASSED]} passed, {counts[SKIPPED]} skipped, "
            f"{counts[OFF]} off in this profile")


def section_count(results: Results, outcome: str) -> str:
    """"2 checks, 3 findings": a finding is one broken rule on one kind of request, so a check may have several."""
    findings = results.findings_of(outcome)
    checks = len({(f.api, f.check.name) for f in findings})
    return f"{checks} check{'s' * (checks != 1)}, {len(findings)} finding{'s' * (len(findings) != 1)}"


def _findings(results: Results, outcome: str) -> str:
    count = len(results.findings_of(outcome))
    return f" ({count} finding{'s' * (count != 1)})" if count else ""


# The test-set page, cursor: why a curl command that sends a cursor may not replay its page later.
SEALED_CURSOR_NOTE = (
    "a curl command that sends a cursor replays its page only while the service still takes that cursor: \"A "
    "runtime that seals cursors takes one only for the same list, filters and caller, within a day; otherwise 400 "
    "bad-input, and the list starts again without it.\" (the test-set page, cursor). Later, walk from the first "
    "page again to reach it")


def replay_notes(results: Results, redactor: Redactor) -> list[str]:
    """What a reader needs to run the findings' curl commands: the variables that stand for secrets, and, when one
    sends a cursor, how long a cursor may be taken."""
    shown = results.shown_requests()
    notes = [legend] if (legend := redactor.legend("\n".join(request.curl for request in shown))) else []
    if any(carries_a_cursor(parse_qs(urlsplit(request.url).query, keep_blank_values=True)) for request in shown):
        notes.append(SEALED_CURSOR_NOTE)
    return notes


def throttling_text(results: Results) -> str | None:
    """The service's throttling, reported once (None when the service never throttled)."""
    report = results.throttling
    if not (report.waited_out or report.given_up):
        return None
    return report.text()


def api_line(results: Results, api: str) -> str:
    rows = results.rows(api)
    count = {outcome: sum(t.outcome == outcome for t in rows) for outcome in OUTCOME_ORDER}
    # Incomplete: for a reason of its own, or a check of it that could not judge an answer still throttled (the
    # throttling is one reason of the whole audit, yet its unjudged checks are this API's).
    unjudged = results.throttling.given_up and any(f.api == api and f.title.startswith(UNJUDGED_PREFIX)
                                                   for f in results.skips)
    state = "failed" if count[FAILED] else "incomplete" if unjudged or any(
        r.startswith(f"{api}:") for r in results.incomplete_reasons()) else "conforms"
    return (f"{api}: {state} — {count[FAILED]} failed, {count[WARNED]} warned, {count[PASSED]} passed, "
            f"{count[SKIPPED]} skipped, {count[OFF]} off")


def policy_line(results: Results) -> str:
    return f"profile {results.policy.profile}, {'strict' if results.policy.strict else 'inferred rules as warnings'}"


def ordered_rows(results: Results, api: str) -> list[Tally]:
    return sorted(results.rows(api), key=lambda t: OUTCOME_ORDER[t.outcome])


def print_summary(results: Results, redactor: Redactor, stream: TextIO) -> None:
    """Per API a table of checks (what needs doing first), then each failure and warning, then the verdict."""
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
            paint = colour[t.outcome]
            table.add_row(t.check.name, t.check.level.value, KIND_WORDS[t.check.kind], str(t.passed), str(t.failed),
                          str(t.warned), str(t.skipped), f"[{paint}]{t.outcome}[/{paint}]")
        console.print(table)
    for finding in [*results.failures, *results.warnings]:
        word = "FAILED" if finding.outcome == FAILED else "WARNING"
        console.print(f"{word} {finding.check.name} [{finding.check.level}] ({finding.count}× {finding.shape}): "
                      f"{redactor.text(finding.title)}", markup=False)
    for reason in results.incomplete_reasons():
        console.print(f"incomplete: {redactor.text(reason)}", markup=False)
    for note in results.remarks():
        console.print(f"note: {redactor.text(note)}", markup=False)
    if (throttling := throttling_text(results)) is not None:
        console.print(f"throttling (the service's, not a rule): {throttling}", markup=False)
    console.print(f"{headline(results)} ({policy_line(results)})", markup=False)


def summary_console(stream: TextIO) -> Console:
    """A terminal's own width; anywhere else (a log, a pipe to grep) no wrapping at all, so each line is whole."""
    from rich.console import Console

    if stream.isatty():
        return Console(file=stream, highlight=False)
    return Console(file=stream, width=UNWRAPPED_WIDTH, soft_wrap=True, highlight=False)


def summary_text(results: Results) -> str:
    """The verdict in a few plain lines: headline, each API, why incomplete, and each failure and warning."""
    lines = [headline(results), *(api_line(results, api) for api in results.apis)]
    lines += [f"incomplete: {reason}" for reason in results.incomplete_reasons()]
    if (throttling := throttling_text(results)) is not None:
        lines.append(f"throttling (the service's, not a rule): {throttling}")
    for finding in [*results.failures, *results.warnings]:
        word = "FAILED" if finding.outcome == FAILED else "WARNING"
        lines.append(f"{word} {finding.check.name} [{finding.check.level}] ({finding.count}× {finding.shape}): "
                     f"{finding.title}")
    return "\n".join(lines)


# -- one finding as text ------------------------------------------------------------------------------------
def finding_text(finding: Finding, limit: int = MAX_JUNIT_TEXT) -> str:
    """A finding in plain text, at most `limit` characters: rule, source, count, examples, a curl for the first."""
    check = finding.check
    lines = [f"rule: {check.rule}", f"source: {check.source.describe()}"]
    if finding.code:
        lines.append(f"Schemathesis code: {finding.code}")
    if finding.shape:
        lines.append(f"{finding.count} response(s) of {finding.shape}")
    for number, example in enumerate(finding.examples, 1):
        lines += ["", f"example {number}: {clip(example.message, MAX_EXAMPLE_TEXT)}"]
        if example.pointer is not None:
            lines.append(f"at {example.pointer or '(the body)'}: {clip(example.value or '', 200)}")
        if example.request is not None:
            lines.append(f"request: {example.request.method} {example.request.url} -> {example.request.status}")
            if number == 1:
                lines.append(f"reproduce: {example.request.curl}")
    if finding.count > len(finding.examples):
        lines.append(f"… and {finding.count - len(finding.examples)} more")
    return clip("\n".join(lines), limit)


# -- JUnit --------------------------------------------------------------------------------------------------
def write_junit(results: Results, path: str | Path, redactor: Redactor) -> None:
    """One <testsuite> per API, one <testcase> per check; a warning passes, with its text in <system-out>. The verdict
    is a property of <testsuites>; an INCOMPLETE audit is also an error of its own suite (`evalmock`), because a
    test report that counts only failures would show it green while the command exits 4."""
    verdict = results.verdict
    root, props = _junit_root(verdict.name)
    if (throttling := throttling_text(results)) is not None:
        ET.SubElement(props, "property", name="throttling", value=throttling)
    if verdict is Verdict.INCOMPLETE:
        reasons = results.incomplete_reasons()
        _verdict_error(root, "audit_is_complete", "incomplete", redactor.text(
            f"INCOMPLETE: the audit checked too little to say the target conforms ({'; '.join(reasons)})"),
            redactor.text("\n".join(reasons)))
    for api in results.apis:
        rows = results.rows(api)
        suite = ET.SubElement(
            root, "testsuite", name=api, tests=str(len(rows)),
            failures=str(sum(t.outcome == FAILED for t in rows)),
            skipped=str(sum(t.outcome in (SKIPPED, OFF) for t in rows)), errors="0",
        )
        for t in rows:
            case = ET.SubElement(suite, "testcase", classname=f"{api}.{t.check.topic}", name=t.check.name)
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="level", value=t.check.level.value)
            ET.SubElement(props, "property", name="source", value=redactor.text(t.check.source.describe()))
            mine = [f for f in results.findings if f.check is t.check]
            if t.outcome == FAILED:
                failed = [f for f in mine if f.outcome == FAILED]
                element = ET.SubElement(case, "failure", message=redactor.text(failed[0].title),
                                        type=failed[0].code or t.check.level.value)
                element.text = redactor.text(clip("\n\n".join(finding_text(f) for f in failed), MAX_JUNIT_TEXT))
            elif t.outcome in (SKIPPED, OFF):
                reason = next((f.title for f in mine if f.outcome == SKIPPED), results.policy.why_off(t.check.source))
                ET.SubElement(case, "skipped", message=redactor.text(reason))
            elif t.outcome == WARNED:
                out = ET.SubElement(case, "system-out")
                out.text = redactor.text(clip("\n\n".join("warning: " + finding_text(f) for f in mine
                                                          if f.outcome == WARNED), MAX_JUNIT_TEXT))
    _write_xml(root, path, redactor)


def write_junit_not_run(message: str, exit_code: int, path: str | Path, redactor: Redactor) -> None:
    """JUnit for an audit that could not start (a target that does not answer, a token it refuses): one error in
    its own suite, so that a CI's test report shows why the job failed rather than nothing at all."""
    root, props = _junit_root("NOT_RUN")
    ET.SubElement(props, "property", name="exit_code", value=str(exit_code))
    _verdict_error(root, "audit_could_start", "not-run", redactor.text(message), redactor.text(message))
    _write_xml(root, path, redactor)


def _junit_root(verdict: str) -> tuple[ET.Element, ET.Element]:
    """<testsuites> with its <properties>, the verdict the first of them."""
    root = ET.Element("testsuites", name="evalmock contract")
    props = ET.SubElement(root, "properties")
    ET.SubElement(props, "property", name="verdict", value=verdict)
    return root, props


def _verdict_error(root: ET.Element, name: str, kind: str, message: str, text: str) -> None:
    """An error of the verdict's own suite (`evalmock`): a test report that counts only failures sees it."""
    suite = ET.SubElement(root, "testsuite", name="evalmock", tests="1", failures="0", skipped="0", errors="1")
    case = ET.SubElement(suite, "testcase", classname="evalmock.verdict", name=name)
    ET.SubElement(case, "error", type=kind, message=message).text = text


def _write_xml(root: ET.Element, path: str | Path, redactor: Redactor) -> None:
    ET.indent(root)
    write_whole(path, redactor.text(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n")


# -- Markdown and HTML --------------------------------------------------------------------------------------
REPORT_FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def report_format(path: str | Path) -> str | None:
    """`markdown` or `html` from the report file's suffix; None for any other suffix."""
    return REPORT_FORMATS.get(Path(path).suffix.lower())


def write_report(results: Results, path: str | Path, *, base_url: str, redactor: Redactor,
                 run: RunInfo | None = None) -> None:
    """A Markdown report (`.md`) or an HTML one (`.html`/`.htm`), chosen by the file's suffix; `run` is the run's
    metadata for the header (by default: now, against `base_url`)."""
    path = Path(path)
    render = render_html if report_format(path) == "html" else render_markdown
    write_whole(path, redactor.text(render(results, base_url=base_url, run=run)))


SECTIONS = (
    (FAILED, "Failures", "Rules the target breaks. Each is a page rule (or, with --strict, an inferred one)."),
    (WARNED, "Warnings", "Inferred rules the target breaks: conventions the pages imply but do not state. They fail "
                         "only with --strict."),
)

THROTTLING_INTRO = ("The service's throttling (429, or 503 with Retry-After): not a rule of the pages, so never a "
                    "failure. Each throttled answer was waited out and its request sent again; an answer still "
                    "throttled when the retries or the wait budget ran out was judged by no check, and leaves the "
                    "audit incomplete.")


def markdown_header(results: Results, run: RunInfo) -> list[str]:
    """The run's metadata as a two-column table."""
    lines = ["| run | |", "|---|---|"]
    lines += [f"| {label} | `{value}` |" for label, value in run.rows(results)]
    return [*lines, ""]


def incomplete_intro(results: Results) -> str:
    if results.verdict is Verdict.INCOMPLETE:
        return "Nothing failed, but the audit cannot say the target conforms:"
    return "Besides what failed, these parts of the audit are incomplete:"


def render_markdown(results: Results, *, base_url: str, run: RunInfo | None = None) -> str:
    run = run or RunInfo(base_url)
    lines = ["# evalmock contract report", "", *markdown_header(results, run), f"**{headline(results)}**", ""]
    lines += [f"- {api_line(results, api)}" for api in results.apis] + [""]
    if reasons := results.incomplete_reasons():
        lines += ["## Incomplete", "", incomplete_intro(results), ""]
        lines += [f"- {reason}" for reason in reasons] + [""]
    for outcome, title, intro in SECTIONS:
        findings = results.findings_of(outcome)
        if not findings:
            continue
        lines += [f"## {title} ({section_count(results, outcome)})", "", intro, ""]
        for finding in findings:
            lines += _markdown_finding(finding)
    if (throttling := throttling_text(results)) is not None:
        lines += ["## Throttling", "", THROTTLING_INTRO, "", throttling + ".", ""]
    lines += ["## Not checked", "", "| check | level | why |", "|---|---|---|"]
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == SKIPPED:
                why = "; ".join(f.title for f in results.skips if f.check is t.check)
            elif t.outcome == OFF:
                why = results.policy.why_off(t.check.source)
            else:
                continue
            lines.append(f"| `{api}` `{t.check.name}` | {t.check.level} | {why} |")
    lines += ["", "## Passed", "", "| check | level | kind | responses or runs | source |", "|---|---|---|--:|---|"]
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == PASSED:
                lines.append(f"| `{api}` `{t.check.name}` | {t.check.level} | {KIND_WORDS[t.check.kind]} | {t.passed} "
                             f"| {t.check.source.describe()} |")
    if notes := results.remarks():
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def _markdown_finding(finding: Finding) -> list[str]:
    check = finding.check
    lines = [f"### `{check.name}` ({check.api}, {check.level})", "", f"Rule: {check.rule.replace(chr(10), ' ')}", "",
             f"Source: {check.source.describe()}", ""]
    if finding.shape:
        lines += [f"{finding.count} response(s) of `{finding.shape}`" + (f", Schemathesis {finding.code}"
                                                                           if finding.code else "") + ".", ""]
    for number, example in enumerate(finding.examples, 1):
        lines += [f"Example {number}:", "", "```text", clip(example.message, MAX_EXAMPLE_TEXT), "```", ""]
        if example.pointer is not None:
            lines += [f"At `{example.pointer or '/'}`: `{clip(example.value or '', 200)}`", ""]
        if example.request is not None:
            lines += [f"Request: `{example.request.method} {shown_url(example.request.url)}` answered "
                      f"{example.request.status}.", ""]
            if number == 1:
                lines += ["```sh", example.request.curl, "```", ""]
    if finding.count > len(finding.examples):
        lines += [f"… and {finding.count - len(finding.examples)} more.", ""]
    return lines


def shown_url(url: str) -> str:
    """A request's URL as a finding's "Request:" line shows it: a query value longer than LONG_VALUE characters (a
    walk's fortieth cursor runs to kilobytes) shortened to its start and its length; the curl command keeps it
    whole."""
    return _LONG_QUERY_VALUE.sub(lambda m: f"{m[1]}{m[2][:SHOWN_START]}…({len(m[2])} characters)", url)


LONG_VALUE, SHOWN_START = 120, 40
_LONG_QUERY_VALUE = re.compile(rf"([?&][^=&#]*=)([^&#]{{{LONG_VALUE + 1},}})")


def prose(text: str) -> str:
    """Text for the page, escaped, a `quoted` command or name set as code (as the Markdown report shows it), each
    command-line option kept on one line: a browser breaks lines at hyphens, and `--rate-` at the end of a line with
    `limit` on the next reads as another option."""
    return _OPTION.sub(r'<span class="flag">\1</span>', _CODE_SPAN.sub(r"<code>\1</code>", html.escape(text)))


def name_html(name: str) -> str:
    """A check's name, escaped, that may break after each underscore (a table of long names then fits a tablet's
    width) and is copied as written: <wbr> adds no character."""
    return html.escape(name).replace("_", "_<wbr>")


_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def report_css() -> str:
    """The page's style. Long URLs, curl lines and sources wrap anywhere, so that nothing is wider than the window."""
    return (
        "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}"
        "table{border-collapse:collapse;margin:.5rem 0;max-width:100%}td,th{border:1px solid #ccc;"
        "padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}"
        ".failed{color:#b00020;font-weight:bold}.warned{color:#8a5a00;font-weight:bold}"
        ".skipped,.off{color:#666}.passed{color:#1b6e20}.finding{border-left:4px solid #b00020;padding:.25rem 1rem;"
        "margin:1rem 0;background:#fff7f7}.finding-warned{border-color:#c98a00;background:#fffbf0}"
        ".finding h3{margin:.5rem 0}.level{font-size:.8rem;padding:.05rem .4rem;border-radius:.6rem;background:#eee}"
        "pre{background:#f4f4f4;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere}"
        "p,li,h3{overflow-wrap:anywhere}.verdict{font-size:1.2rem}.source{color:#444;font-size:.9rem;overflow-wrap:anywhere}"
        ".run{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem;margin:1rem 0;"
        "padding:.5rem 1rem;background:#f6f8fa;border:1px solid #ddd}.run dt{color:#555}.run dd{margin:0;"
        "overflow-wrap:anywhere}.flag{white-space:nowrap}"
        # a phone's width: each table row becomes a card of labelled cells, rather than columns a letter wide
        "@media (max-width:40rem){body{margin:1rem auto}table,tbody,tr,td{display:block}tr:first-child{display:none}"
        "tr{border:1px solid #ccc;margin:.5rem 0}td{border:0;padding:.15rem .5rem;overflow-wrap:anywhere}"
        "td::before{content:attr(data-label) ': ';color:#555;font-weight:bold}}"
    )


def html_header(results: Results, run: RunInfo) -> str:
    """The run's metadata as a definition list."""
    e = html.escape
    return ('<dl class="run">' + "".join(f"<dt>{e(label)}</dt><dd><code>{e(value)}</code></dd>"
                                         for label, value in run.rows(results)) + "</dl>")


def render_html(results: Results, *, base_url: str, run: RunInfo | None = None) -> str:
    e = html.escape
    run = run or RunInfo(base_url)
    verdict_class = {Verdict.VIOLATIONS: "failed", Verdict.INCOMPLETE: "warned", Verdict.CONFORMS: "passed"}
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        "<title>evalmock contract report</title>",
        f"<style>{report_css()}</style></head><body>",
        "<h1>evalmock contract report</h1>",
        html_header(results, run),
        f'<p class="verdict {verdict_class[results.verdict]}">{e(headline(results))}</p>',
        "<ul>" + "".join(f"<li>{prose(api_line(results, api))}</li>" for api in results.apis) + "</ul>",
    ]
    if reasons := results.incomplete_reasons():
        parts.append(f"<h2>Incomplete</h2><p>{prose(incomplete_intro(results))}</p><ul>"
                     + "".join(f"<li>{prose(r)}</li>" for r in reasons) + "</ul>")
    for outcome, title, intro in SECTIONS:
        findings = results.findings_of(outcome)
        if not findings:
            continue
        parts.append(f"<h2>{title} ({section_count(results, outcome)})</h2><p>{prose(intro)}</p>")
        for finding in findings:
            parts.append(_html_finding(finding))
    if (throttling := throttling_text(results)) is not None:
        parts.append(f"<h2>Throttling</h2><p>{prose(THROTTLING_INTRO)}</p><p>{prose(throttling)}.</p>")
    not_checked: list[tuple[str, ...]] = []
    for api in results.apis:
        for t in ordered_rows(results, api):
            if t.outcome == SKIPPED:
                why = "; ".join(f.title for f in results.skips if f.check is t.check)
            elif t.outcome == OFF:
                why = results.policy.why_off(t.check.source)
            else:
                continue
            not_checked.append((e(api), f"<code>{name_html(t.check.name)}</code>", str(t.check.level),
                                f'<span class="{t.outcome}">{prose(why)}</span>'))
    parts.append("<h2>Not checked</h2>" + _html_table(("API", "check", "level", "why"), not_checked))
    passed = [(e(api), f"<code>{name_html(t.check.name)}</code>", str(t.check.level), KIND_WORDS[t.check.kind],
               str(t.passed), f'<span class="source">{e(t.check.source.describe())}</span>')
              for api in results.apis for t in ordered_rows(results, api) if t.outcome == PASSED]
    parts.append("<h2>Passed</h2>" + _html_table(
        ("API", "check", "level", "kind", "responses or runs", "source"), passed))
    if notes := results.remarks():
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{prose(n)}</li>" for n in notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A table whose cells carry their column's name, so that a phone's width shows each row as a card."""
    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"
    body = "".join("<tr>" + "".join(f'<td data-label="{html.escape(h)}">{cell}</td>'
                                    for h, cell in zip(headers, row, strict=True)) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def _html_finding(finding: Finding) -> str:
    e = html.escape
    check = finding.check
    parts = [f'<div class="finding finding-{finding.outcome}"><h3><code>{name_html(check.name)}</code> '
             f'<span class="level">{e(check.api)} · {check.level}</span></h3>',
             f"<p>Rule: {e(check.rule)}</p>", f'<p class="source">Source: {e(check.source.describe())}</p>']
    if finding.shape:
        code = f", Schemathesis {e(finding.code)}" if finding.code else ""
        parts.append(f"<p>{finding.count} response(s) of <code>{e(finding.shape)}</code>{code}.</p>")
    for number, example in enumerate(finding.examples, 1):
        parts.append(f"<p>Example {number}:</p><pre>{e(clip(example.message, MAX_EXAMPLE_TEXT))}</pre>")
        if example.pointer is not None:
            parts.append(f"<p>At <code>{e(example.pointer or '/')}</code>: <code>{e(clip(example.value or '', 200))}"
                         "</code></p>")
        if example.request is not None:
            parts.append(f"<p>Request: <code>{e(example.request.method)} {e(shown_url(example.request.url))}</code> "
                         f"answered {example.request.status}.</p>")
            if number == 1:
                parts.append(f"<pre>{e(example.request.curl)}</pre>")
    if finding.count > len(finding.examples):
        parts.append(f"<p>… and {finding.count - len(finding.examples)} more.</p>")
    parts.append("</div>")
    return "".join(parts)
