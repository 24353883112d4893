"""pytest as users expect: the plugin loads by its pytest11 entry point (no -p), runs one test per check with clean
node ids and JUnit classnames, fails an audit that checked too little, and `audit_url` makes a five-line test."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from evalmock.contract.targets import dump_targets, load_targets
from evalmock.harness.checks import CHECKS

FIVE_LINES = '''from evalmock.harness.audit import audit_url
from evalmock.harness.report import summary_text

def test_the_service_conforms():
    results = audit_url("{base_url}", targets="{targets}", max_examples=3)
    assert results.conforms, summary_text(results)
'''


def run_pytest(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """pytest in a temporary project with no conftest.py and no -p: only the installed entry point loads us."""
    verbosity = [] if "-v" in arguments else ["-q"]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *verbosity, "-rs",
               "-W", "ignore::DeprecationWarning", *arguments]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)


def test_the_entry_point_runs_a_test_per_check_against_our_server(live_server: Any, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = run_pytest(tmp_path, "--evalmock-base-url", live_server.base_url, "--evalmock-targets",
                      str(live_server.targets_path), "--evalmock-max-examples", "3", f"--junitxml={junit}", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(tmp_path.glob("conftest.py"))
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == len(CHECKS) + 2  # and one completeness test per API
    names = {(case.get("classname"), case.get("name")) for case in cases}
    assert ("evalmock.test-set", "walk_yields_every_case_once") in names
    assert ("evalmock.gradient", "audit_is_complete") in names
    assert "evalmock::test-set::walk_yields_every_case_once PASSED" in done.stdout
    assert "::evalmock" not in done.stdout


def test_a_five_line_test_file_audits_a_url_with_the_targets_auth(live_server: Any, tmp_path: Path) -> None:
    targets = load_targets(live_server.targets_path)
    assert targets.token  # the [auth] token is the only token this audit gets
    (tmp_path / "test_service.py").write_text(
        FIVE_LINES.format(base_url=live_server.base_url, targets=live_server.targets_path))
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_without_a_token_the_five_line_test_fails_as_incomplete(live_server: Any, tmp_path: Path) -> None:
    targets = load_targets(live_server.targets_path)
    tokenless = tmp_path / "tokenless.toml"
    dump_targets(type(targets)(projects=targets.projects, test_cases=targets.test_cases), tokenless)
    (tmp_path / "test_service.py").write_text(FIVE_LINES.format(base_url=live_server.base_url, targets=tokenless))
    done = run_pytest(tmp_path)
    assert done.returncode == 1
    assert "INCOMPLETE" in done.stdout and "every scenario check was skipped" in done.stdout


def test_an_audit_that_checked_nothing_fails_its_completeness_test(live_server: Any, tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "--evalmock-base-url", live_server.base_url, "--evalmock-no-fuzz",
                      "--evalmock-api", "test-set")
    assert done.returncode == 1
    assert "evalmock::test-set::audit_is_complete" in done.stdout and "incomplete" in done.stdout


def test_the_plugin_reports_a_bad_targets_file_as_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[auth\n")
    done = run_pytest(tmp_path, "--evalmock-base-url", "http://127.0.0.1:9", "--evalmock-targets", str(bad))
    assert done.returncode == 4  # pytest's usage error
    assert "bad.toml" in done.stderr


def test_without_a_base_url_the_plugin_adds_nothing(tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    assert done.returncode == 5  # no tests collected
