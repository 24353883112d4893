"""An audit that an internal error stops exits 70, and the JUnit file and report it was asked for
say that it did not finish: no file an earlier run left there, and nothing the error said, stands
in them."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from evalmock import entry
from evalmock.exits import CRASHED
from evalmock.harness import contract_command

SECRET = "s3cret-from-the-service"
STALE = "CONFORMS: an earlier run's verdict"


def _crashing_audit(*args: Any, **kwargs: Any) -> int:
    raise RuntimeError(f"the service sent {SECRET}")


@pytest.mark.parametrize("report_name", ["report.md", "report.html"])
def test_a_crashed_audit_rewrites_its_junit_and_report_to_say_it_did_not_finish(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    report_name: str,
) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / report_name
    for stale in (junit, report):
        stale.write_text(STALE)
    monkeypatch.setattr(contract_command, "run_har_audit", _crashing_audit)
    har = tmp_path / "traffic.har"
    har.write_text('{"log": {"entries": []}}')
    arguments = ["evalmock", "contract", "--har", str(har), "--junit", str(junit)]
    monkeypatch.setattr(sys, "argv", [*arguments, "--report", str(report)])

    assert entry.main() == CRASHED

    said = capsys.readouterr().err
    assert said.startswith("evalmock: internal error, not a verdict on the service: RuntimeError")
    root = ET.fromstring(junit.read_text())
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties == {"verdict": "NOT_FINISHED", "exit_code": str(CRASHED)}
    error = root.find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "crashed"
    assert "RuntimeError in _crashing_audit" in (error.get("message") or "")
    written = report.read_text()
    assert "the audit did not finish" in written
    assert "RuntimeError in _crashing_audit" in written
    for text in (junit.read_text(), written, said):
        assert STALE not in text and SECRET not in text


def test_a_crash_leaves_files_it_was_not_asked_for_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "junit.xml"
    elsewhere.write_text(STALE)
    monkeypatch.setattr(contract_command, "run_har_audit", _crashing_audit)
    har = tmp_path / "traffic.har"
    har.write_text('{"log": {"entries": []}}')
    monkeypatch.setattr(sys, "argv", ["evalmock", "contract", "--har", str(har)])

    assert entry.main() == CRASHED
    assert elsewhere.read_text() == STALE
