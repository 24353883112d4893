"""The JavaScript module for Playwright and Cypress (examples/frontend/evalmock.mjs) against a real
mock, with Node's own test runner (`node --test`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalmock.testing import start_mock

HERE = Path(__file__).resolve().parent
NODE_TESTS = HERE / "evalmock.test.mjs"
INSTALL_HINT = "apt-get install nodejs (.ci/run installs it)"


def node() -> str:
    """Node's path; in CI a missing Node fails the test, elsewhere it skips saying how to install
    it."""
    found = shutil.which("node")
    if found:
        return found
    message = f"Node.js is not installed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def test_the_js_module_creates_faults_reads_judges_and_deletes_sessions() -> None:
    executable = node()
    with start_mock(["--cases", "5"]) as mock:
        done = subprocess.run(
            [executable, "--test", str(NODE_TESTS)],
            env={**os.environ, "EVALMOCK_MOCK_URL": mock.base_url, "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout and "# pass 7" in done.stdout, done.stdout
