"""`evalmock validate`: passes on our documents, fails with a located message on broken copies."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from evalmock.cli import main
from evalmock.contract.documents import ADMIN, APIS, TEST_SET
from evalmock.contract.lint import _examples, examples_match_schemas
from evalmock.contract.validate import validate_document

LIST = "/agents/{agentId}/test-set/cases"


def write(tmp_path: Path, spec: dict[str, Any]) -> Path:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def broken_copy() -> dict[str, Any]:
    return copy.deepcopy(TEST_SET.spec)


@pytest.mark.parametrize("name", sorted(APIS))
def test_each_document_passes_openapi_spec_validator(name: str) -> None:
    validate(APIS[name].spec)


@pytest.mark.parametrize("name", sorted(APIS))
def test_each_document_passes_our_lint(name: str) -> None:
    assert validate_document(APIS[name].path) == []


def test_every_example_validates_against_its_schema() -> None:
    for api in APIS.values():
        assert len(list(_examples(api.spec))) >= 5, f"{api.name}: the examples were not found"
        assert list(examples_match_schemas(api.spec)) == []


def test_validate_command_exits_zero_on_our_documents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    # the two pages' documents and the admin API's
    assert out.count(": ok") == len(APIS) + 1
    assert f"{ADMIN.filename}: ok" in out


def test_validate_reports_a_missing_ref_target_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = broken_copy()
    spec["paths"][LIST]["get"]["responses"]["400"] = {"$ref": "#/components/responses/Missing"}
    assert main(["validate", str(write(tmp_path, spec))]) == 1
    out = capsys.readouterr().out
    assert "/responses/400" in out
    assert "'#/components/responses/Missing' points to nothing" in out
    assert "Traceback" not in out


def test_validate_reports_an_invalid_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = broken_copy()
    page = spec["paths"][LIST]["get"]["responses"]["200"]["content"]["application/json"][
        "examples"
    ]["page"]
    page["value"]["data"][0]["kind"] = "robot"
    assert main(["validate", str(write(tmp_path, spec))]) == 1
    out = capsys.readouterr().out
    assert (
        "examples/page/value/data/0/kind: example does not match its schema: 'robot' is not one of"
        in out
    )


def test_validate_reports_a_bad_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = broken_copy()
    spec["components"]["schemas"]["Verdict"]["type"] = "strng"
    path = write(tmp_path, spec)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "/components/schemas/Verdict" in out
    # The location carries the YAML line of the broken schema.
    line = next(
        i
        for i, text in enumerate(path.read_text().splitlines(), 1)
        if text.startswith("    Verdict:")
    )
    assert f"{path}:{line}: /components/schemas/Verdict" in out


def test_validate_reports_an_unanchored_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = broken_copy()
    spec["paths"][LIST]["get"]["parameters"][3]["schema"]["pattern"] = "(correction|hand)"
    assert main(["validate", str(write(tmp_path, spec))]) == 1
    assert "must be anchored with ^ and $" in capsys.readouterr().out


def test_validate_rejects_openapi_31(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = broken_copy()
    spec["openapi"] = "3.1.0"
    assert main(["validate", str(write(tmp_path, spec))]) == 1
    assert "expected OpenAPI 3.0.x" in capsys.readouterr().out


def test_validate_reports_a_link_to_an_unknown_operation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = broken_copy()
    spec["paths"][LIST]["get"]["responses"]["200"]["links"]["nextPage"]["operationId"] = "nope"
    assert main(["validate", str(write(tmp_path, spec))]) == 1
    assert "link targets unknown operationId 'nope'" in capsys.readouterr().out


def test_validate_reports_unparseable_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("openapi: 3.0.3\npaths: [\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    assert "not valid YAML" in capsys.readouterr().out


def test_validate_reports_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / "absent.yaml")]) == 1
    assert "cannot read" in capsys.readouterr().out
