"""`evalmock validate`: openapi-spec-validator plus our lint, one readable line per problem."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from openapi_spec_validator import OpenAPIV30SpecValidator

from evalmock.contract.lint import lint, pointer
from evalmock.contract.schemas import pointer_tokens
from evalmock.paths import openapi_dir


@dataclass(frozen=True)
class Problem:
    """One problem in one document, at a JSON pointer (and its line, when known)."""

    path: Path
    pointer: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.pointer or '/'}: {self.message}"


def validate_document(path: Path) -> list[Problem]:
    """All problems of one document: unreadable, invalid OpenAPI, or failing our lint."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = yaml.compose(text)
        spec = yaml.safe_load(text)
    except OSError as exc:
        return [Problem(path, "", f"cannot read: {exc.strerror or exc}")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        return [Problem(path, "", f"not valid YAML: {getattr(exc, 'problem', exc)}", line)]
    if not isinstance(spec, dict):
        return [Problem(path, "", "the document must be a mapping at the top level")]

    findings = lint(spec)
    # The spec validator crashes on dangling references, so it runs only once they resolve.
    if not any("$ref" in message for _, message in findings):
        findings = _spec_validator_findings(spec) + findings
    return [Problem(path, where, message, _line_of(tree, where)) for where, message in findings]


def _spec_validator_findings(spec: dict[str, Any]) -> list[tuple[str, str]]:
    findings = []
    try:
        for error in OpenAPIV30SpecValidator(spec).iter_errors():
            parts = list(error.path)
            message = error.message.split("\n")[0]
            if parts and parts[0] not in spec:
                # Errors inside a referenced schema come without the path to it; say so, not a wrong place.
                message = f"in a schema, at {'/'.join(map(str, parts))}: {message}"
                parts = []
            findings.append((pointer(*parts), message))
    except Exception as exc:  # the validator's own failure is still a finding, never a traceback
        findings.append(("", f"openapi-spec-validator failed: {exc.__class__.__name__}: {str(exc)[:200]}"))
    return findings


def _line_of(tree: yaml.Node | None, where: str) -> int | None:
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


def default_documents() -> list[Path]:
    return sorted(p for p in openapi_dir().iterdir() if p.suffix in {".yaml", ".yml", ".json"})


def run_validate(paths: Sequence[str]) -> int:
    documents = [Path(p) for p in paths] or default_documents()
    if not documents:
        print(f"no documents found under {openapi_dir()}", file=sys.stderr)
        return 2
    failed = 0
    for document in documents:
        problems = validate_document(document)
        for problem in problems:
            print(problem)
        failed += bool(problems)
        if not problems:
            print(f"{document}: ok")
    if failed:
        print(f"{failed} of {len(documents)} document(s) failed validation")
        return 1
    return 0
