"""The benchmark's record of the interpreter it measured: its build in its own words, and a
calibration time."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import lib  # bench/ is a folder of scripts, not a package


def test_the_interpreter_facts_name_its_build_and_time_a_fixed_piece_of_python() -> None:
    facts = lib.interpreter_facts(sys.executable)
    assert facts["python_build"].startswith(platform.python_version() + " ")
    assert platform.python_compiler() in facts["python_build"]
    assert isinstance(facts["python_calibration_ms"], float)
    assert 0 < facts["python_calibration_ms"] < 10_000


def test_an_interpreter_that_does_not_exist_is_refused_by_name() -> None:
    missing = sys.executable + "-no-such-interpreter"
    with pytest.raises(SystemExit, match="no such interpreter") as refused:
        lib.evalmock_python(missing)
    assert missing in str(refused.value)
