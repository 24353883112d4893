"""The client rules' verdict in each output: lines for the summary, a Markdown or HTML section for
the report, a JUnit test suite. The texts are the verdict's own (`contract/client_verdict.py`); each
output redacts and escapes them as it does the audit's."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Any, TextIO

from evalmock.contract.client_verdict import FAILED, ClientVerdict
from evalmock.harness.excerpts import clip, printable
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted

TITLE = "The app, judged by the page"
SUITE = "client"  # the JUnit suite of the client rules
INTRO = (
    "What the app sent through the proxy, judged by what the pages ask of a client "
    "(`evalmock rules` lists these rules). A page rule's finding fails the verdict; an inferred "
    "one warns (fails with --strict)."
)
MAX_TEXT = 2_000  # characters of a finding in JUnit


def finding_line(finding: dict[str, Any]) -> str:
    """`FAILED client_waits_retry_after [page] request #3 GET /v1/… -> 200 at …: message`."""
    word = "FAILED" if finding["outcome"] == FAILED else "WARNING"
    request = finding["request"]
    caller = f"caller {request['caller']} " if "caller" in request else ""
    return (
        f"{word} {finding['rule']} [{finding['level']}] {caller}request #{request['index']} "
        f"{request['method']} {request['path']} -> {request['status']} at {request['at']}: "
        f"{finding['message']}"
    )


def headline(verdict: ClientVerdict) -> str:
    failed = sum(f["outcome"] == FAILED for f in verdict.findings)
    warned = len(verdict.findings) - failed
    return (
        f"the app: {verdict.verdict} ({verdict.judged} of "
        f"{counted(verdict.requests, 'request')} judged; {failed} failed, {warned} warned; "
        f"{counted(len(verdict.not_judged), 'rule')} not judged)"
    )


def summary_lines(verdict: ClientVerdict) -> list[str]:
    """The summary's lines: each finding, each rule not judged and why, the notes, the headline."""
    lines = [finding_line(finding) for finding in verdict.findings]
    lines += [f"not judged: {n['rule']} [{n['level']}]: {n['why']}" for n in verdict.not_judged]
    lines += [f"note: {note}" for note in verdict.notes]
    return [*lines, headline(verdict)]


def print_summary(verdict: ClientVerdict, redactor: Redactor, stream: TextIO) -> None:
    """The summary's lines, redacted, each control character escaped."""
    for line in summary_lines(verdict):
        print(printable(redactor.text(line)), file=stream, flush=True)


def markdown_section(verdict: ClientVerdict) -> list[str]:
    lines = [f"## {TITLE}", "", INTRO, "", f"**{headline(verdict)}**", ""]
    lines += [f"- {_code(finding_line(finding))}" for finding in verdict.findings]
    if verdict.not_judged:
        lines += ["", "| rule not judged | level | why |", "|---|---|---|"]
        lines += [f"| `{n['rule']}` | {n['level']} | {_md(n['why'])} |" for n in verdict.not_judged]
    lines += [f"- note: {_md(note)}" for note in verdict.notes]
    return [*lines, ""]


def html_section(verdict: ClientVerdict) -> str:
    e = html.escape
    parts = [f"<h2>{e(TITLE)}</h2>", f"<p>{e(INTRO)}</p>", f"<p>{e(headline(verdict))}</p>"]
    if verdict.findings:
        parts.append(
            "<ul>" + "".join(f"<li>{e(finding_line(f))}</li>" for f in verdict.findings) + "</ul>"
        )
    if verdict.not_judged:
        parts.append(
            "<table><tr><th>rule not judged</th><th>level</th><th>why</th></tr>"
            + "".join(
                f"<tr><td><code>{e(n['rule'])}</code></td><td>{e(n['level'])}</td>"
                f"<td>{e(n['why'])}</td></tr>"
                for n in verdict.not_judged
            )
            + "</table>"
        )
    if verdict.notes:
        parts.append("<ul>" + "".join(f"<li>{e(note)}</li>" for note in verdict.notes) + "</ul>")
    return "\n".join(parts)


def junit_suite(root: ET.Element, verdict: ClientVerdict, redactor: Redactor) -> None:
    """A <testsuite name="client">: one <testcase> per rule, failed, skipped (not judged) or
    passed (a warning in <system-out>)."""
    failed = {f["rule"] for f in verdict.findings if f["outcome"] == FAILED}
    not_judged = {n["rule"]: n["why"] for n in verdict.not_judged}
    suite = ET.SubElement(
        root,
        "testsuite",
        name=SUITE,
        tests=str(len(verdict.rules)),
        failures=str(len(failed)),
        skipped=str(
            sum(t["rule"] not in failed and t["rule"] in not_judged for t in verdict.rules)
        ),
        errors="0",
    )
    for tally in verdict.rules:
        name = tally["rule"]
        case = ET.SubElement(suite, "testcase", classname=SUITE, name=name)
        mine = [finding_line(f) for f in verdict.findings if f["rule"] == name]
        text = redactor.text(clip("\n".join(mine), MAX_TEXT))
        if name in failed:
            ET.SubElement(case, "failure", message=redactor.text(mine[0]), type=tally["level"])
            case[-1].text = text
        elif mine:
            ET.SubElement(case, "system-out").text = text
        elif name in not_judged:
            ET.SubElement(case, "skipped", message=redactor.text(not_judged[name]))


def _code(text: str) -> str:
    """An inline code span on one line that the text cannot close (CommonMark 6.1)."""
    text = " ".join(text.splitlines())
    run = max((len(r) for r in re.findall("`+", text)), default=0)
    ticks = "`" * (run + 1)
    return f"{ticks} {text} {ticks}" if run else f"`{text}`"


def _md(text: str) -> str:
    """Text whose every markup character is escaped (CommonMark lets a backslash escape any ASCII
    punctuation): a path or a cursor is never read as a link, HTML or a table's `|`."""
    text = " ".join(text.splitlines())
    return "".join("\\" + c if c in "\\`*_{}[]<>()#+-!|~" else c for c in text)
