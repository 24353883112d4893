"""The `evalmock` command imports its command line with the garbage collector paused, and runs it with the collector
on again; the console script and `python -m evalmock` both go through that entry point."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# In a fresh interpreter: whether the collector ran while evalmock.cli was being imported, and whether it runs after.
ENTRY = """
import gc, importlib.abc, sys
during = []

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "evalmock.cli":
            during.append(gc.isenabled())
        return None

sys.meta_path.insert(0, Watch())
sys.argv = ["evalmock", "--help"]
from evalmock.entry import main
try:
    main()
except SystemExit:
    pass
print(during, gc.isenabled())
"""


def test_the_command_line_is_imported_with_the_collector_paused_and_runs_with_it_on() -> None:
    run = subprocess.run([sys.executable, "-c", ENTRY], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.splitlines()[-1] == "[False] True"


def test_the_console_script_and_python_m_use_the_entry_point() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["evalmock"] == "evalmock.entry:main"
    assert "from evalmock.entry import main" in (ROOT / "src" / "evalmock" / "__main__.py").read_text()
    run = subprocess.run([sys.executable, "-m", "evalmock", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("usage: evalmock")
