"""A problem in a YAML or JSON file, at a JSON pointer, and the line that pointer lands on (via
yaml.compose)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from evalmock.contract.schemas import pointer_tokens


@dataclass(frozen=True)
class Problem:
    """One problem in one file, at a JSON pointer (and its line, and column, when known); a problem
    of a document given in memory has no path."""

    path: Path | None
    pointer: str
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.path is None:
            return f"{self.pointer or '/'}: {self.message}"
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        if self.line and self.column:
            where += f":{self.column}"
        return f"{where}: {self.pointer or '/'}: {self.message}"


def unreadable(path: Path, exc: yaml.YAMLError, language: str = "YAML") -> Problem:
    """The problem of a text PyYAML cannot parse, at the line and column where it gave up."""
    mark = getattr(exc, "problem_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
    return Problem(
        path, "", f"not valid {language}: {getattr(exc, 'problem', None) or exc}", line, column
    )


def compose(text: str, *, is_json: bool = False) -> yaml.Node | None:
    """The node tree of a YAML or JSON text, only to find lines in; None when PyYAML cannot read it.

    Valid JSON is YAML but for one thing: it may indent with tabs, which YAML refuses. A tab in
    valid JSON can only be white space (one inside a string is escaped), so spaces stand in for tabs
    without moving a line.
    """
    try:
        return yaml.compose(text.replace("\t", " ") if is_json else text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def line_of(tree: yaml.Node | None, where: str) -> int | None:
    """The 1-based line of the node at a JSON pointer, or of its nearest existing ancestor."""
    node, line = tree, (tree.start_mark.line + 1 if tree else None)
    for part in pointer_tokens(where):
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == part), None)
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]  # the key's line reads best
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line
