"""The pytest plugin: `pytest -p evalmock.harness.pytest_plugin --evalmock-base-url URL --evalmock-targets FILE`
runs one test per semantic check plus the Schemathesis run, and they pass against our live server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from evalmock.harness.checks import RESPONSE_CHECKS, SCENARIO_CHECKS


def run_pytest(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "evalmock.harness.pytest_plugin", "-p", "no:cacheprovider",
               "-q", "-rs", *arguments, str(tmp_path)]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_the_plugin_generates_a_test_per_check_and_passes_our_server(live_server: Any, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = run_pytest(tmp_path, "--evalmock-base-url", live_server.base_url, "--evalmock-targets",
                      str(live_server.targets_path), "--evalmock-max-examples", "3", f"--junitxml={junit}")
    assert done.returncode == 0, done.stdout + done.stderr
    expected = len(SCENARIO_CHECKS) + len(RESPONSE_CHECKS) + 2  # plus one Schemathesis run per API
    text = junit.read_text()
    assert text.count("<testcase") == expected
    assert 'classname=".evalmock-contract.test-set" name="walk_yields_every_case_once"' in text
    assert 'classname=".evalmock-contract.gradient" name="schemathesis"' in text


def test_the_plugin_reports_a_bad_targets_file_as_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[auth\n")
    done = run_pytest(tmp_path, "--evalmock-base-url", "http://127.0.0.1:9", "--evalmock-targets", str(bad))
    assert done.returncode == 4  # pytest's usage error
    assert "bad.toml" in done.stderr


def test_without_a_base_url_the_plugin_adds_nothing(tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    assert done.returncode == 5  # no tests collected
