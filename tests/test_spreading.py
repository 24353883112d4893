"""`dev.py test` spreads the suite over processes (pytest-xdist, --dist loadgroup): each test on the
next free process, the container tests all in one; a file still runs alone under plain pytest."""

from __future__ import annotations

import os
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


SUITE_CONFTEST = """
import importlib.util
import sys

sys.path.insert(0, {tests!r})
import process_groups

# in this suite, the module test_together.py is a group, as tests/containers/ is in ours
process_groups.GROUPS.clear()
process_groups.GROUPS["test_together.py"] = "together"
_spec = importlib.util.spec_from_file_location("evalmock_suite_conftest", {conftest!r})
_ours = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ours)
pytest_xdist_make_scheduler = _ours.pytest_xdist_make_scheduler
"""
SUITE_TEST = """
import os
import time
import pytest


@pytest.mark.parametrize("n", range({count}))
def test_note_the_process(n):
    time.sleep(0.2)
    with open({notes!r}, "a") as notes:
        notes.write(__name__ + " " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def processes_of_each_module(tmp_path: Path, dist: str) -> dict[str, set[str]]:
    """Which processes ran a small suite's tests, by module, spread over 2 with `--dist`: six
    tests in test_alone.py, four in test_together.py (a group)."""
    suite, notes = tmp_path / "suite", tmp_path / "notes.txt"
    suite.mkdir()
    tests = ROOT / "tests"
    (suite / "conftest.py").write_text(
        SUITE_CONFTEST.format(tests=str(tests), conftest=str(tests / "conftest.py"))
    )
    for module, count in (("test_alone", 6), ("test_together", 4)):
        (suite / f"{module}.py").write_text(SUITE_TEST.format(count=count, notes=str(notes)))
    done = run_pytest("-n", "2", "--dist", dist, "-q", "--rootdir", str(suite), str(suite))
    assert done.returncode == 0, done.stdout[-3000:]
    spread: dict[str, set[str]] = {}
    for line in notes.read_text().splitlines():
        module, worker = line.split()
        spread.setdefault(module, set()).add(worker)
    return spread


def test_loadgroup_sends_each_test_to_the_next_free_process_and_a_group_to_one(
    tmp_path: Path,
) -> None:
    spread = processes_of_each_module(tmp_path, "loadgroup")
    assert spread["test_alone"] == {"gw0", "gw1"}, spread  # not xdist's one module, one process
    assert len(spread["test_together"]) == 1, spread


def test_a_file_runs_alone_under_plain_pytest() -> None:
    done = run_pytest("-q", MODULES[0])
    assert done.returncode == 0, done.stdout[-3000:]
    assert "bringing up nodes" not in done.stdout
