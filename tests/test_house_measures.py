"""The house's measures of src/ hold: no function over 60 lines, no module over 400 (the measures
the review hook prints, so that what it flags a test fails on), and no environment variable named
outside environment.py, whole or inside a text."""

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


# A variable's name said in a string, whole (`"EVALMOCK_PORT"`) or inside a longer text (a help, a
# message): its home is environment.py, and a text names it with `f"... {environment.PORT} ..."`.
# Not names: ready_line.py's PREFIX, the line `evalmock serve` prints; a `$EVALMOCK_...` an output
# shows in place of a secret, the redactor's (harness/secrets/). A docstring, read by maintainers,
# may name one: it cannot be built from environment.py.
VARIABLE_NAME = re.compile(r"(?<![$\w{])(?:EVALMOCK_[A-Z0-9_]+|SSL_CERT_(?:FILE|DIR))\b")
NAMES_A_VARIABLE_ELSEWHERE = {"evalmock/ready_line.py": {"EVALMOCK_LISTENING"}}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are a module's, class's or function's docstring."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def variable_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of each variable's name said in a string constant of `source` (an f-string's
    text parts included), docstrings left out."""
    tree = ast.parse(source)
    skipped = docstrings(tree)
    return [
        (node.lineno, name)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
        for name in VARIABLE_NAME.findall(node.value)
    ]


def test_the_measure_flags_a_variable_named_in_any_string_but_a_docstring() -> None:
    source = (
        '"""Reads EVALMOCK_PORT."""\n'
        'X = "EVALMOCK_PORT"\n'
        'HELP = "the port (env EVALMOCK_PORT)"\n'
        'SHOWN = f"{x} (also SSL_CERT_FILE)"\n'
        'STAND_IN = "Bearer $EVALMOCK_TOKEN, ${EVALMOCK_TOKEN}"\n'
        "def f():\n"
        '    """Uses EVALMOCK_PORT."""\n'
    )
    assert variable_names(source) == [
        (2, "EVALMOCK_PORT"),
        (3, "EVALMOCK_PORT"),
        (4, "SSL_CERT_FILE"),
    ]


def test_every_environment_variable_is_named_in_environment_py_only() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "environment.py"
        for line, name in variable_names(path.read_text(encoding="utf-8"))
        if name not in NAMES_A_VARIABLE_ELSEWHERE.get(path.relative_to(SRC).as_posix(), set())
    ]
    assert found == [], "name each in environment.py and build the text from it"
