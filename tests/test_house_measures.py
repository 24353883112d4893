"""The house's measures of src/ hold: no function over 60 lines, no module over 400 (the measures
the review hook prints, so that what it flags a test fails on), and no environment variable named
outside environment.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def long_functions(source: str) -> list[tuple[int, str, int]]:
    """(line, name, lines) of each function or method in `source` that spans 60 lines or more
    from its `def` line to its last: `end_lineno - lineno >= 60`, the hook's measure."""
    return [
        (node.lineno, node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno >= MAX_FUNCTION_LINES
    ]


def test_the_measure_flags_a_61_line_function_and_passes_a_60_line_one() -> None:
    def function(lines: int) -> str:  # a `def` line and `lines - 1` more
        return "def f():\n" + "    x = 1\n" * (lines - 1)

    assert long_functions(function(60)) == []
    assert long_functions("class C:\n    " + function(61).replace("\n", "\n    ")) == [(2, "f", 61)]


def test_no_function_in_src_is_over_60_lines() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line} {name}: {lines} lines"
        for path in sorted(SRC.rglob("*.py"))
        for line, name, lines in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "split each by job"


def test_no_module_in_src_is_over_400_lines() -> None:
    found = [
        f"{path.relative_to(SRC)}: {lines} lines"
        for path in sorted(SRC.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert found == [], "split each by job, a module per job"


# A name said as a whole string constant, `"EVALMOCK_..."`: a variable's name, whose home is
# environment.py. ready_line.py's PREFIX is the line `evalmock serve` prints, not a variable; a
# `$EVALMOCK_...` an output shows in place of a secret is the redactor's (harness/secrets/).
VARIABLE_NAME = re.compile(r"EVALMOCK_[A-Z0-9_]+")
NAMES_A_VARIABLE_ELSEWHERE = {"evalmock/ready_line.py": {"EVALMOCK_LISTENING"}}


def variable_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of each string constant in `source` that is an EVALMOCK_ variable's name."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and VARIABLE_NAME.fullmatch(node.value)
    ]


def test_the_measure_flags_a_variable_named_outside_environment_py() -> None:
    assert variable_names('X = "EVALMOCK_PORT"\nhelp = "see EVALMOCK_PORT"\n') == [
        (1, "EVALMOCK_PORT")
    ]


def test_every_environment_variable_is_named_in_environment_py_only() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "environment.py"
        for line, name in variable_names(path.read_text(encoding="utf-8"))
        if name not in NAMES_A_VARIABLE_ELSEWHERE.get(str(path.relative_to(SRC)), set())
    ]
    assert found == [], "name each in environment.py and import it from there"
