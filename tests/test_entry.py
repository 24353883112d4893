"""The `evalmock` command imports its command line, then the command's own modules, with the garbage
collector paused and what they made frozen, and runs the command with the collector on again; the
console script and `python -m evalmock` both go through that entry point."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evalmock.exits import CRASHED, VIOLATIONS

ROOT = Path(__file__).resolve().parent.parent

# In a fresh interpreter, `evalmock rules`: whether the collector ran while the command line and
# then the command's own module were imported; then whether it runs after, and whether what they
# made was frozen.
ENTRY = """
import gc, importlib.abc, sys
during = {}

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("evalmock.cli", "evalmock.harness.report.rule_tables"):
            during[name] = gc.isenabled()
        return None

sys.meta_path.insert(0, Watch())
sys.argv = ["evalmock", "rules"]
from evalmock.entry import main
main()
print(during, gc.isenabled(), gc.get_freeze_count() > 30_000)
"""


def test_the_command_line_and_command_are_imported_paused_frozen_and_run_collector_on() -> None:
    run = subprocess.run(
        [sys.executable, "-c", ENTRY], capture_output=True, text=True, timeout=120, check=True
    )
    paused = "{'evalmock.cli': False, 'evalmock.harness.report.rule_tables': False}"
    assert run.stdout.splitlines()[-1] == f"{paused} True True"


def test_long_lived_leaves_a_paused_collector_paused() -> None:
    code = (
        "import gc; from evalmock.importing import long_lived; gc.disable()\n"
        "with long_lived():\n    made = [[] for _ in range(1000)]\n"
        "print(gc.isenabled(), gc.get_freeze_count() >= 1000)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.split() == ["False", "True"]


def test_the_console_script_and_python_m_use_the_entry_point() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["evalmock"] == "evalmock.entry:main"
    assert (
        "from evalmock.entry import main" in (ROOT / "src" / "evalmock" / "__main__.py").read_text()
    )
    run = subprocess.run(
        [sys.executable, "-m", "evalmock", "--help"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stdout.startswith("usage: evalmock")


def test_ctrl_c_outside_a_server_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import evalmock.cli
    from evalmock import entry

    def interrupted() -> int:  # Ctrl-C during a start or an audit
        raise KeyboardInterrupt

    monkeypatch.setattr(evalmock.cli, "main", interrupted)
    assert entry.main() == 130
    assert capsys.readouterr().err == "evalmock: interrupted\n"


def test_a_crash_exits_with_its_own_code_and_says_where_without_a_traceback_or_its_text() -> None:
    code = (
        "import sys, evalmock.cli\n"
        "def broken(argv=None):\n"
        "    raise RuntimeError('token s3cret-from-the-service')\n"
        "evalmock.cli.main = broken\n"
        "sys.argv = ['evalmock', 'rules']\n"
        "from evalmock.entry import main\n"
        "sys.exit(main())"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == CRASHED != VIOLATIONS
    assert run.stderr.startswith("evalmock: internal error, not a verdict on the service: ")
    assert "RuntimeError in broken" in run.stderr
    assert "s3cret" not in run.stderr and "Traceback" not in run.stderr
