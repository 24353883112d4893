"""`dev.py test` spreads the suite over processes (pytest-xdist, --dist loadgroup): each test on the
next free process, the container tests all in one; a file still runs alone under plain pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import conftest
from process_groups import GroupScheduling, process_group

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("tests/test_healthcheck.py", "tests/test_entry.py")


def run_pytest(*args: str) -> subprocess.CompletedProcess[str]:
    # this run's own: not taken for a worker of the run that started it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_ADD"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_container_tests_share_one_process_and_every_other_test_goes_alone() -> None:
    image, replicas = (
        "tests/containers/test_image.py::test_a",
        "tests/containers/test_replicas.py::b",
    )
    assert process_group(image) == process_group(replicas) == "containers"
    alone = ["tests/world/test_cases.py::test_a", "tests/world/test_cases.py::test_b"]
    assert [process_group(nodeid) for nodeid in alone] == alone


class Options:
    def __init__(self, dist: str) -> None:
        self.dist = dist

    def getoption(self, name: str) -> Any:
        return {"dist": self.dist}.get(name)

    def getvalue(self, name: str) -> Any:
        return {"tx": ["popen"] * 2, "numprocesses": 2}.get(name)


def test_loadgroup_schedules_by_these_groups_and_other_modes_are_xdist_s_own() -> None:
    assert isinstance(
        conftest.pytest_xdist_make_scheduler(Options("loadgroup"), None), GroupScheduling
    )
    assert conftest.pytest_xdist_make_scheduler(Options("load"), None) is None


def test_spread_over_two_processes_the_tests_pass_on_both() -> None:
    done = run_pytest("-n", "2", "--dist", "loadgroup", "-v", *MODULES)
    assert done.returncode == 0, done.stdout[-3000:]
    workers = set(re.findall(r"^\[(gw\d+)\].* PASSED tests/", done.stdout, re.M))
    assert workers == {"gw0", "gw1"}, done.stdout[-3000:]


def test_a_file_runs_alone_under_plain_pytest() -> None:
    done = run_pytest("-q", MODULES[0])
    assert done.returncode == 0, done.stdout[-3000:]
    assert "bringing up nodes" not in done.stdout
