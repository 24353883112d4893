"""JUnit XML of an audit: one <testsuite> per API, one <testcase> per check, the verdict as a
property."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from evalmock.contract.client_verdict import ClientVerdict
from evalmock.exits import CRASHED
from evalmock.harness.checks.policy import FAILED, SKIPPED, WARNED
from evalmock.harness.excerpts import clip, escaped, printable
from evalmock.harness.report import client_section
from evalmock.harness.report.view import (
    MAX_EXAMPLE_TEXT,
    MAX_JUNIT_TEXT,
    shown_request,
    throttling_text,
)
from evalmock.harness.results.audit_results import Results
from evalmock.harness.results.findings import Finding
from evalmock.harness.results.tally import OFF, Tally
from evalmock.harness.results.verdict import Verdict
from evalmock.harness.secrets.redactor import Redactor
from evalmock.nouns import counted
from evalmock.whole_file import write_whole


def finding_text(finding: Finding, limit: int = MAX_JUNIT_TEXT) -> str:
    """A finding in plain text, at most `limit` characters: rule, source, count, examples, a curl
    for the first."""
    check = finding.check
    lines = [
        f"{finding.stated}",
        f"rule: {check.rule}",
        f"source: {finding.source.describe()}",
    ]
    if finding.code:
        lines.append(f"Schemathesis code: {finding.code}")
    if finding.shape:
        lines.append(f"{counted(finding.count, 'response')} of {finding.shape}")
    for number, example in enumerate(finding.examples, 1):
        lines += ["", f"example {number}: {clip(example.message, MAX_EXAMPLE_TEXT)}"]
        if example.pointer is not None:
            lines.append(f"at {example.pointer or '(the body)'}: {clip(example.value or '', 200)}")
        if example.request is not None:
            lines.append(
                f"request: {shown_request(example.request, with_curl=number == 1)} -> "
                f"{example.request.status}"
            )
            if number == 1:
                lines.append(f"reproduce: {example.request.curl}")
    if finding.count > len(finding.examples):
        lines.append(f"… and {finding.count - len(finding.examples)} more")
    return clip("\n".join(lines), limit)


def write_junit(
    results: Results, path: str | Path, redactor: Redactor, client: ClientVerdict | None = None
) -> None:
    """One <testsuite> per API, one <testcase> per check; a warning passes, with its text in
    <system-out>. The verdict is a property of <testsuites>; an INCOMPLETE audit is also an error of
    its own suite (`evalmock`), because a test report that counts only failures would show it green
    while the command exits 4."""
    verdict = results.verdict
    root, props = _junit_root(verdict.name)
    if (throttling := throttling_text(results)) is not None:
        ET.SubElement(props, "property", name="throttling", value=throttling)
    if verdict is Verdict.INCOMPLETE:
        reasons = [str(reason) for reason in results.incomplete_reasons()]
        _verdict_error(
            root,
            "audit_is_complete",
            "incomplete",
            redactor.text(
                "INCOMPLETE: the audit checked too little to say the target conforms "
                f"({'; '.join(reasons)})"
            ),
            redactor.text("\n".join(reasons)),
        )
    for api in results.apis:
        rows = results.rows(api)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=api,
            tests=str(len(rows)),
            failures=str(sum(t.outcome == FAILED for t in rows)),
            skipped=str(sum(t.outcome in (SKIPPED, OFF) for t in rows)),
            errors="0",
        )
        for t in rows:
            _testcase(suite, t, results, redactor)
    if client is not None:  # the client rules, on what the app sent: a suite of their own
        ET.SubElement(props, "property", name="client_verdict", value=client.verdict)
        client_section.junit_suite(root, client, redactor)
    _write_xml(root, path, redactor)


def _testcase(suite: ET.Element, t: Tally, results: Results, redactor: Redactor) -> None:
    """One check's <testcase>: its level and source, and its failure, skip or warnings."""
    api = t.check.api
    case = ET.SubElement(suite, "testcase", classname=f"{api}.{t.check.topic}", name=t.check.name)
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="level", value=t.check.level.value)
    ET.SubElement(props, "property", name="source", value=redactor.text(t.check.source.describe()))
    mine = [f for f in results.findings if f.check is t.check]
    if t.outcome == FAILED:
        failed = [f for f in mine if f.outcome == FAILED]
        element = ET.SubElement(
            case,
            "failure",
            message=redactor.text(failed[0].stated),
            type=failed[0].code or t.check.level.value,
        )
        element.text = redactor.text(
            clip("\n\n".join(finding_text(f) for f in failed), MAX_JUNIT_TEXT)
        )
    elif t.outcome in (SKIPPED, OFF):
        reason = next(
            (f.title for f in mine if f.outcome == SKIPPED), results.policy.why_off(t.check.source)
        )
        ET.SubElement(case, "skipped", message=redactor.text(reason))
    elif t.outcome == WARNED:
        out = ET.SubElement(case, "system-out")
        out.text = redactor.text(
            clip(
                "\n\n".join("warning: " + finding_text(f) for f in mine if f.outcome == WARNED),
                MAX_JUNIT_TEXT,
            )
        )


def write_junit_not_run(message: str, exit_code: int, path: str | Path, redactor: Redactor) -> None:
    """JUnit for an audit that could not start (a target that does not answer, a token it refuses):
    one error in its own suite, so that a CI's test report shows why the job failed rather than
    nothing at all."""
    _write_verdict_only(
        "NOT_RUN", exit_code, "audit_could_start", "not-run", message, path, redactor
    )


def write_junit_unfinished(message: str, path: str | Path, redactor: Redactor) -> None:
    """JUnit for an audit that an internal error stopped: one error saying it did not finish, in
    place of any file an earlier run left there (it would read as this run's verdict)."""
    _write_verdict_only(
        "NOT_FINISHED", CRASHED, "audit_finished", "crashed", message, path, redactor
    )


def _write_verdict_only(
    verdict: str,
    exit_code: int,
    name: str,
    kind: str,
    message: str,
    path: str | Path,
    redactor: Redactor,
) -> None:
    root, props = _junit_root(verdict)
    ET.SubElement(props, "property", name="exit_code", value=str(exit_code))
    _verdict_error(root, name, kind, redactor.text(message), redactor.text(message))
    _write_xml(root, path, redactor)


def _junit_root(verdict: str) -> tuple[ET.Element, ET.Element]:
    """<testsuites> with its <properties>, the verdict the first of them."""
    root = ET.Element("testsuites", name="evalmock contract")
    props = ET.SubElement(root, "properties")
    ET.SubElement(props, "property", name="verdict", value=verdict)
    return root, props


def _verdict_error(root: ET.Element, name: str, kind: str, message: str, text: str) -> None:
    """An error of the verdict's own suite (`evalmock`): a test report that counts only failures
    sees it."""
    suite = ET.SubElement(
        root, "testsuite", name="evalmock", tests="1", failures="0", skipped="0", errors="1"
    )
    case = ET.SubElement(suite, "testcase", classname="evalmock.verdict", name=name)
    ET.SubElement(case, "error", type=kind, message=message).text = text


# Characters XML 1.0 cannot hold at all (C0 controls but tab, newline and return; U+FFFE, U+FFFF;
# lone surrogates): a service's bytes that carry one would leave the file unreadable to every CI.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` with each character XML cannot hold, and each control character a terminal would obey
    (`cat` of the file), shown as its escape (`\\x1b`, `\\r`)."""
    return escaped(printable(text, lines=True), _NOT_XML)


def _write_xml(root: ET.Element, path: str | Path, redactor: Redactor) -> None:
    for element in root.iter():
        element.text = None if element.text is None else xml_safe(element.text)
        element.attrib = {name: xml_safe(value) for name, value in element.attrib.items()}
    ET.indent(root)
    write_whole(
        path, redactor.text(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"
    )
