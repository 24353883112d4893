"""Control characters a service sends (ESC, BEL, CR, C1) reach no output raw: the console, the
Markdown and HTML reports and JUnit each show them as their escapes, so that `cat report.md` cannot
retitle a terminal, clear it or overwrite a line, and a `\\r` cannot start a line of a report."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from evalmock.harness.checks.policy import Policy
from evalmock.harness.report.files import write_report
from evalmock.harness.report.junit import write_junit
from evalmock.harness.report.terminal import print_summary
from evalmock.harness.results.audit_results import Results
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.harness.secrets.redactor import Redactor

from .conftest import MutableServer
from .mutants import Mutation, on_cases

# a window title, a bell, a cleared screen, a line overwritten, a line faked, a C1 "CSI"
HOSTILE = "x\x1b]0;CONFORMS\x07\x1b[2J\rCONFORMS: 0 checks failed\nexpected: kind\x9b2K"
SHOWN = r"x\x1b]0;CONFORMS\x07\x1b[2J\rCONFORMS: 0 checks failed\nexpected: kind\x9b2K"
RAW = re.compile(b"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")  # C0 but \n, DEL, C1 as UTF-8


def _hostile_name(case: dict[str, Any]) -> None:
    case["kind"] = HOSTILE


@pytest.fixture(scope="module")
def hostile_results(mutable_server: MutableServer) -> Results:
    mutable_server.switch.mutation = Mutation(
        "controls", "control characters in a value", "", (), response=on_cases(_hostile_name)
    )
    try:
        return run_audit(
            Audit(
                base_url=mutable_server.base_url,
                targets=mutable_server.targets,
                apis=("test-set",),
                token=mutable_server.targets.token,
                fuzz=False,
                only=frozenset({"kind_filter_selects_those_kinds"}),
                policy=Policy(),
            )
        )
    finally:
        mutable_server.switch.mutation = None


def test_the_finding_shows_the_value_on_its_one_received_line(hostile_results: Results) -> None:
    [finding] = [
        f for f in hostile_results.failures if f.check.name == "cases_have_the_requested_kinds"
    ]
    lines = finding.examples[0].message.splitlines()
    assert len(lines) == 3 and lines[2] == f"received: {SHOWN}"


def test_cat_of_the_markdown_report_meets_no_control_character(
    hostile_results: Results, tmp_path: Path
) -> None:
    path = tmp_path / "report.md"
    write_report(hostile_results, path, base_url="h", redactor=Redactor())
    written = path.read_bytes()
    assert RAW.findall(written) == []
    assert f"received: {SHOWN}".encode() in written


def test_a_carriage_return_cannot_start_a_line_of_the_html_report(
    hostile_results: Results, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    write_report(hostile_results, path, base_url="h", redactor=Redactor())
    written = path.read_bytes()
    assert RAW.findall(written) == []
    # a browser reads \r in a <pre> as a line break: the faked verdict would be a line of its own
    assert f"received: {SHOWN}".encode() in written
    assert not re.search(rb"[\r\n](CONFORMS|expected: kind)", written)


def test_junit_shows_the_controls_as_escapes(hostile_results: Results, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(hostile_results, path, Redactor())
    written = path.read_bytes()
    assert RAW.findall(written) == []
    assert b"\\x1b]0;CONFORMS\\x07\\x1b[2J\\rCONFORMS" in written


def test_the_console_summary_shows_the_controls_as_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = Results(Policy(), ("test-set",))
    results.notes.append(f"the service said {HOSTILE}")
    print_summary(results, Redactor(), sys.stdout)
    console = capsys.readouterr().out.encode()
    assert RAW.findall(console) == []
    assert b"the service said x\\x1b]0;CONFORMS\\x07" in console


def test_why_an_audit_did_not_start_is_printed_with_the_controls_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from evalmock.harness.contract_command import _fail

    _fail(Redactor(), f"no audited API answers: -> 404 ({HOSTILE})", 3)
    said = capsys.readouterr().err.encode()
    assert RAW.findall(said.rstrip(b"\n")) == [] and b"x\\x1b]0;CONFORMS\\x07" in said
