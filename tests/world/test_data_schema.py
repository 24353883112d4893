"""The data file's JSON Schema: derived from the documents, shipped up to date, and agreeing with
the loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

from data_builders import case, data, shop
from evalmock.cli import main
from evalmock.contract.documents import GRADIENT, TEST_SET
from evalmock.paths import openapi_dir
from evalmock.world.data_schema import SCHEMA_FILENAME, SHORT_FORM, data_file_schema, render

SHIPPED = openapi_dir().parent / "schemas" / SCHEMA_FILENAME
REGENERATE = f"python3.11 dev.py evalmock fixtures schema -o schemas/{SCHEMA_FILENAME}"


def editor() -> Draft7Validator:
    """What an editor does with the shipped file."""
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def test_the_shipped_schema_is_the_one_the_documents_give() -> None:
    assert SHIPPED.read_text(encoding="utf-8") == render(data_file_schema()), (
        f"out of date: run {REGENERATE}"
    )


def _opened(node: Any) -> Any:
    """A schema without the `additionalProperties: false` that closes its objects."""
    if isinstance(node, list):
        return [_opened(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _opened(value)
        for key, value in node.items()
        if (key, value) != ("additionalProperties", False)
    }


def _objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _objects(item)]
    if not isinstance(node, dict):
        return []
    return [node] * ("properties" in node) + [
        found for value in node.values() for found in _objects(value)
    ]


def test_the_case_shapes_are_the_documents_component_schemas_closed_to_other_keys() -> None:
    definitions = data_file_schema()["definitions"]
    for api, name in (
        (TEST_SET, "TestSetCase"),
        (TEST_SET, "ToolCall"),
        (GRADIENT, "apiEvaluationTestCase"),
    ):
        stated = json.loads(
            json.dumps(api.spec["components"]["schemas"][name]).replace(
                "#/components/schemas/", "#/definitions/"
            )
        )
        if name in SHORT_FORM:  # a data file's case may leave out any key (the short form)
            del stated["required"]
        assert _opened(definitions[name]) == stated
    objects = _objects(definitions)
    assert objects and all("additionalProperties" in node for node in objects)
    # args stay free-form
    assert definitions["ToolCall"]["properties"]["args"]["additionalProperties"] is True


def test_an_editor_flags_a_misspelled_key_inside_a_case() -> None:
    misspelled = case("case-1", "2026-10-01T12:00:00Z", retierd={"reason": "Superseded."})
    errors = list(
        editor().iter_errors(data([("shop", "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", [misspelled])]))
    )
    assert [(list(e.absolute_path), e.validator) for e in errors] == [
        (["testSet", 0, "cases", 0], "additionalProperties")
    ]


def test_fixtures_schema_writes_the_schema(tmp_path: Path) -> None:
    assert main(["fixtures", "schema", "-o", str(tmp_path / "schema.json")]) == 0
    assert (tmp_path / "schema.json").read_text(encoding="utf-8") == SHIPPED.read_text(
        encoding="utf-8"
    )


def test_an_export_is_valid_for_an_editor(tmp_path: Path) -> None:
    path = tmp_path / "world.json"
    assert main(["fixtures", "export", "--cases", "5", "-o", str(path)]) == 0
    assert list(editor().iter_errors(json.loads(path.read_text(encoding="utf-8")))) == []
    assert list(editor().iter_errors(shop())) == []


def test_an_editor_takes_short_form_cases_and_their_retirements() -> None:
    short = [{}, {"kind": "hand"}, {"retired": {}}, {"retired": {"at": "2026-10-01T12:00:00Z"}}]
    document = data([("shop", "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", short)])
    assert list(editor().iter_errors(document)) == []
    short_by = [{"addedBy": {"kind": "user"}}]  # what a case gives is whole
    document = data([("shop", "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", short_by)])
    assert [e.validator for e in editor().iter_errors(document)] == ["required"]


def test_an_editor_flags_a_case_the_document_refuses() -> None:
    bad = case("case-1", "2026-10-01T12:00:00Z", kind="robot")
    errors = list(
        editor().iter_errors(data([("shop", "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b", [bad])]))
    )
    assert [(list(e.absolute_path), e.message) for e in errors] == [
        (["testSet", 0, "cases", 0, "kind"], "'robot' is not one of ['correction', 'hand']")
    ]
