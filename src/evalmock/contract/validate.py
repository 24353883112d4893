"""`evalmock validate`: openapi-spec-validator plus our lint, one readable line per problem."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from openapi_spec_validator import OpenAPIV30SpecValidator

from evalmock.contract.lint import lint, pointer
from evalmock.contract.problems import Problem, line_of, unreadable
from evalmock.exits import FAILED, OK, USAGE
from evalmock.nouns import counted
from evalmock.paths import openapi_dir


def validate_document(path: Path) -> list[Problem]:
    """All problems of one document: unreadable, invalid OpenAPI, or failing our lint."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = yaml.compose(text)
        spec = yaml.safe_load(text)
    except OSError as exc:
        return [Problem(path, "", f"cannot read: {exc.strerror or exc}")]
    except yaml.YAMLError as exc:
        return [unreadable(path, exc)]
    if not isinstance(spec, dict):
        return [Problem(path, "", "the document must be a mapping at the top level")]

    findings = lint(spec)
    # The spec validator crashes on dangling references, so it runs only once they resolve.
    if not any("$ref" in message for _, message in findings):
        findings = _spec_validator_findings(spec) + findings
    return [Problem(path, where, message, line_of(tree, where)) for where, message in findings]


def _spec_validator_findings(spec: dict[str, Any]) -> list[tuple[str, str]]:
    findings = []
    try:
        for error in OpenAPIV30SpecValidator(spec).iter_errors():
            parts = list(error.path)
            message = error.message.split("\n")[0]
            if parts and parts[0] not in spec:
                # Errors inside a referenced schema come without the path to it; say so, not a wrong
                # place.
                message = f"in a schema, at {'/'.join(map(str, parts))}: {message}"
                parts = []
            findings.append((pointer(*parts), message))
    except Exception as exc:  # the validator's own failure is still a finding, never a traceback
        findings.append(
            ("", f"openapi-spec-validator failed: {exc.__class__.__name__}: {str(exc)[:200]}")
        )
    return findings


def default_documents() -> list[Path]:
    return sorted(p for p in openapi_dir().iterdir() if p.suffix in {".yaml", ".yml", ".json"})


def run_validate(paths: Sequence[str]) -> int:
    documents = [Path(p) for p in paths] or default_documents()
    if not documents:
        print(f"no documents found under {openapi_dir()}", file=sys.stderr)
        return USAGE
    failed = 0
    for document in documents:
        problems = validate_document(document)
        for problem in problems:
            print(problem)
        failed += bool(problems)
        if not problems:
            print(f"{document}: ok")
    if failed:
        print(f"{failed} of {counted(len(documents), 'document')} failed validation")
        return FAILED
    return OK
