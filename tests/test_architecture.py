"""The package is layered as docs/maintainers/architecture.md says: a part imports only the parts
below it, the harness's subpackages only those before them, and no module imports itself through a
circle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "evalmock"
# Modules beside the parts, which every part may use; they import no part.
LEAVES = {
    "exits",
    "crash",
    "environment",
    "defaults",
    "paths",
    "whole_file",
    "input_files",
    "importing",
    "ready_line",
    "option_numbers",
    "nouns",
}
PARTS = {
    "contract": {"contract"},
    "world": {"world", "contract"},
    "server": {"server", "world", "contract"},
    "harness": {"harness", "contract"},
    "recording": {"recording", "harness", "world", "contract"},
    "proxy": {"proxy", "recording", "harness", "server", "contract"},
    # a client of a running mock, over HTTP and its ready line: it needs no part
    "testing": {"testing"},
}
# The harness's own layers, lowest first: each imports only those before it (and itself).
HARNESS_LAYERS = ["excerpts", "secrets", "checks", "results", "run", "traffic", "report"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every evalmock module `path` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalmock"):
            found |= _named(node)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("evalmock")}
    return found


def top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalmock"):
            found |= _named(node)
    return found


def _named(node: ast.ImportFrom) -> set[str]:
    """The modules `from X import a, b` names: X.a where that is a module, else X."""
    return {
        f"{node.module}.{alias.name}"
        if f"{node.module}.{alias.name}" in MODULES
        else str(node.module)
        for alias in node.names
    }


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def part(name: str) -> str:
    return name.split(".")[1] if name.count(".") else ""


def harness_layer(name: str) -> int | None:
    pieces = name.split(".")
    if len(pieces) < 3 or pieces[1] != "harness":
        return None
    return HARNESS_LAYERS.index(pieces[2]) if pieces[2] in HARNESS_LAYERS else len(HARNESS_LAYERS)


def test_no_part_imports_a_part_above_it() -> None:
    upward = []
    for name, path in MODULES.items():
        own = part(name)
        allowed = PARTS.get(own)
        for imported in imports(path):
            target = part(imported)
            if own in LEAVES and target and target not in LEAVES:
                upward.append(f"{name} (a leaf module) imports {imported}")
            elif allowed is not None and target and target not in allowed | LEAVES:
                upward.append(f"{name} imports {imported}")
    assert upward == []


def test_each_harness_layer_imports_only_the_layers_before_it() -> None:
    upward = []
    for name, path in MODULES.items():
        layer = harness_layer(name)
        if layer is None:
            continue
        for imported in imports(path):
            other = harness_layer(imported)
            if other is not None and other > layer:
                upward.append(f"{name} imports {imported}")
    assert upward == []


def with_packages(name: str, targets: set[str]) -> set[str]:
    """`targets` and the packages Python runs first to import each (`a.b.c` runs `a.b`'s
    `__init__`), but for those `name` is inside, which ran before it."""
    own = {".".join(name.split(".")[:end]) for end in range(1, name.count(".") + 2)}
    found = set(targets)
    for target in targets:
        pieces = target.split(".")
        found |= {".".join(pieces[:end]) for end in range(2, len(pieces))} - own
    return found


def test_no_module_imports_itself_through_a_circle() -> None:
    graph = {
        name: {
            target
            for target in with_packages(name, top_level_imports(path))
            if target in MODULES and target != name
        }
        for name, path in MODULES.items()
    }
    circles = []
    for start in graph:
        seen, stack = set(), [(start, (start,))]
        while stack:
            node, trail = stack.pop()
            for target in graph[node]:
                if target == start:
                    circles.append(" -> ".join((*trail, start)))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, (*trail, target)))
    assert circles == []


# One topic, one name: a check module's name is its checks' topic (the registry reads it), and the
# filters' checks judge the filters contract/filters.py declares.
SHARED_NAMES = {"filters": {"evalmock.contract.filters", "evalmock.harness.checks.filters"}}


def test_no_two_modules_share_a_name() -> None:
    """One name, one job: `store` in two packages would be two jobs a reader takes for one."""
    by_name: dict[str, set[str]] = {}
    for name in MODULES:
        leaf = name.rsplit(".", 1)[-1]
        if not MODULES[name].name.startswith("__"):  # a package is named by its folder
            by_name.setdefault(leaf, set()).add(name)
    shared = {leaf: names for leaf, names in by_name.items() if len(names) > 1}
    assert shared == SHARED_NAMES
