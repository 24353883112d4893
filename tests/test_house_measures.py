"""The house's measures of src/ hold: no function over 60 lines, no module over 400 (the measures
the review hook prints, so that what it flags a test fails on)."""

from __future__ import annotations

import ast
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
