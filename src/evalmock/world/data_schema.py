"""The JSON Schema of a data file (`evalmock serve --data`), derived from the documents' component
schemas.

The documents stay the only place where a case's shape is stated: the schema's `definitions` are
their component schemas (TestSetCase, apiEvaluationTestCase and what they reference), converted from
OpenAPI 3.0's dialect to JSON Schema draft-07, which editors read. Only the file's frame (lists of
cases, test cases with versions) is stated here. `schemas/evalmock-data.schema.json` is this
module's output, kept current by a test.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft7Validator, validators

from evalmock.contract.documents import GRADIENT, TEST_SET, ApiDocument
from evalmock.contract.operations import iter_operations
from evalmock.contract.schemas import deref, ecma_pattern

SCHEMA_FILENAME = "evalmock-data.schema.json"
DRAFT = "http://json-schema.org/draft-07/schema#"
# The case shapes a data file holds, each the component schema of its document.
TEST_SET_CASE = (TEST_SET, "TestSetCase")
EVALUATION_TEST_CASE = (GRADIENT, "apiEvaluationTestCase")
# The case shapes whose every key a data file's case may leave out (the short form): the loader
# fills them in (evalmock.world.short_form), so the documents' `required` is not a data file's.
SHORT_FORM = ("TestSetCase", "Retirement")
# Keywords of OpenAPI 3.0's Schema Object that JSON Schema does not have (`nullable` and `example`
# are converted).
_OPENAPI_ONLY = frozenset({"discriminator", "xml", "externalDocs", "deprecated"})
# Unicode's control characters (category Cc: C0, DEL and C1), as a character class's ranges for JSON
# Schema and re.
CONTROL_CHARACTERS = "\\u0000-\\u001f\\u007f-\\u009f"
# An id that must fit in one path segment of a request: no slash, no control character.
PATH_SEGMENT = f"^[^/{CONTROL_CHARACTERS}]+$"

FrameValidator = validators.extend(Draft7Validator, {"pattern": ecma_pattern})


def _parameter_schema(api: ApiDocument, name: str) -> dict[str, Any]:
    """The schema of the operation's parameter `name`, as the document states it."""
    spec = api.spec
    for _, _, operation in iter_operations(spec):
        for parameter in operation.get("parameters") or ():
            parameter = deref(spec, parameter)
            if parameter.get("name") == name:
                return _converted(parameter["schema"])
    raise LookupError(f"{api.filename} declares no parameter {name!r}")


def _converted(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema draft-07: local component `$ref`s point into
    `definitions`."""
    if isinstance(node, list):
        return [_converted(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    schema: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            schema[key] = "#/definitions/" + value.rsplit("/", 1)[-1]
        elif key == "example":
            schema["examples"] = [value]
        elif key in ("properties", "definitions"):
            schema[key] = {name: _converted(sub) for name, sub in value.items()}
        elif key == "nullable" or key in _OPENAPI_ONLY or key.startswith("x-"):
            continue
        else:
            schema[key] = _converted(value)
    if node.get("nullable") is True and "type" in schema:
        schema["type"] = [schema["type"], "null"]
    return schema


def _component_definitions(api: ApiDocument, name: str, into: dict[str, Any]) -> None:
    """`name` and every component schema it references, converted, added to `into`."""
    spec = api.spec
    pending = [name]
    while pending:
        current = pending.pop()
        if current in into:
            continue
        original = spec["components"]["schemas"][current]
        into[current] = _converted(original)
        pending += [ref.rsplit("/", 1)[-1] for ref in _refs(original)]


def _refs(node: Any) -> list[str]:
    if isinstance(node, Mapping):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    return []


def _closed(node: Any) -> Any:
    """A converted schema in which every object that lists its properties takes no other key.

    The documents leave `additionalProperties` open (a service may add fields), but a key that a
    data file gives and no document describes is a typo (`retierd` for `retired`) that would be
    served silently. An object that says otherwise (`args`, `additionalProperties: true`) stays
    open.
    """
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    closed = {key: _closed(value) for key, value in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        closed["additionalProperties"] = False
    return closed


def _with(schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A document's schema with more constraints; refuses to overwrite one the document states."""
    clash = sorted(set(schema) & set(extra) - {"description"})
    if clash:
        raise ValueError(f"the document now states {clash} itself; revisit the data file schema")
    return {**schema, **extra}


@functools.cache
def data_file_schema() -> dict[str, Any]:
    """The whole schema, as shipped (callers must not mutate it)."""
    definitions: dict[str, Any] = {}
    for api, name in (TEST_SET_CASE, EVALUATION_TEST_CASE):
        own: dict[str, Any] = {}
        _component_definitions(api, name, own)
        own = {key: _closed(definition) for key, definition in own.items()}
        for name in set(SHORT_FORM) & set(own):
            own[name] = {key: value for key, value in own[name].items() if key != "required"}
        shared = sorted(set(own) & set(definitions))
        if shared:
            raise ValueError(
                f"{api.filename} names component schemas as another document does: {shared}"
            )
        definitions.update(own)
    definitions["TestSetList"] = _test_set_list()
    definitions["EvaluationTestCase"] = _evaluation_test_case()
    return {
        "$schema": DRAFT,
        "title": "evalmock data file",
        "description": "Agents, projects and test-set cases, and DigitalOcean evaluation test "
        "cases, for "
        "`evalmock serve --data FILE` (JSON or YAML). `evalmock fixtures export` writes this "
        "format.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "$schema": {"type": "string", "description": "This schema, for editors; not served."},
            "seed": {
                "type": "integer",
                "description": "The seed an export was made from; not served.",
            },
            "casesPerProject": {
                "type": "integer",
                "description": "An export's world size; not served.",
            },
            "filters": {"type": "object", "description": "An export's filters; not served."},
            "testSet": {"type": "array", "items": {"$ref": "#/definitions/TestSetList"}},
            "gradient": {"type": "array", "items": {"$ref": "#/definitions/EvaluationTestCase"}},
        },
        "definitions": definitions,
    }


def _test_set_list() -> dict[str, Any]:
    """A data file's entry for one agent's project and its cases."""
    return {
        "type": "object",
        "description": "One agent's project and cases of it. An agent or project the world does "
        "not have is added; "
        "in one it has, the cases sit among its own by addedAt.",
        "required": ["agentId", "projectId", "cases"],
        "additionalProperties": False,
        "properties": {
            "agentId": _with(
                _parameter_schema(TEST_SET, "agentId"),
                pattern=PATH_SEGMENT,
                description="The agent, as the path's agentId: no slash and no control characters.",
            ),
            "projectId": _parameter_schema(TEST_SET, "projectId"),
            "note": {"type": "string", "description": "Anything you want to remember; not served."},
            "cases": {
                "type": "array",
                "description": "TestSetCase objects, in any order (served newest addedAt first; "
                "cases sharing an addedAt in this order); each case's projectId is the list's. "
                "A case may leave out any of its keys, and a retired any of its own: they are "
                "filled in from the seed and the case's place (cases whose addedAt is filled are "
                "served in this order), consistently with the keys given.",
                "items": {"$ref": f"#/definitions/{TEST_SET_CASE[1]}"},
            },
        },
    }


def _evaluation_test_case() -> dict[str, Any]:
    """A data file's entry for one evaluation test case and its versions."""
    return {
        "type": "object",
        "description": "A DigitalOcean evaluation test case and every version of it.",
        "required": ["test_case_uuid", "versions"],
        "additionalProperties": False,
        "properties": {
            "test_case_uuid": _with(
                _parameter_schema(GRADIENT, "test_case_uuid"),
                minLength=1,
                pattern=PATH_SEGMENT,
                description="The id the path names (any letter case matches); no slash and no "
                "control characters.",
            ),
            "note": {"type": "string", "description": "Anything you want to remember; not served."},
            "versions": {
                "type": "array",
                "minItems": 1,
                "description": "Oldest first, each body's `version` saying its number: from 1 "
                "up, a number missing where no such version is served.",
                "items": {"$ref": f"#/definitions/{EVALUATION_TEST_CASE[1]}"},
            },
        },
    }


def render(schema: Mapping[str, Any]) -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


@functools.cache
def frame_validator() -> Draft7Validator:
    """Checks a data file's frame only: the cases and versions in it are left to their documents'
    validators."""
    schema = json.loads(json.dumps(data_file_schema()))
    for frame, inner in (("TestSetList", "cases"), ("EvaluationTestCase", "versions")):
        # no need to walk thousands of cases here
        del schema["definitions"][frame]["properties"][inner]["items"]
    return FrameValidator(schema)


def unknown_keys(value: Any, definition: str) -> Iterator[tuple[tuple[Any, ...], str, list[str]]]:
    """(path to the object, its key, the keys it may hold) for each key of `value` no schema
    describes.

    `definition` names the schema of `value` in the data file's definitions (TestSetCase,
    apiEvaluationTestCase); the walk follows the schema's `$ref`s, `properties`, `items` and
    `allOf`.
    """
    definitions = data_file_schema()["definitions"]
    pending: list[tuple[tuple[Any, ...], Any, Any]] = [((), value, definitions[definition])]
    while pending:
        path, node, schema = pending.pop()
        while "$ref" in schema:
            schema = definitions[schema["$ref"].rsplit("/", 1)[-1]]
        pending += [(path, node, branch) for branch in schema.get("allOf", ())]
        if type(node) is dict:
            properties = schema.get("properties", {})
            for key, item in node.items():
                if key not in properties:
                    if schema.get("additionalProperties") is False:
                        yield path, key, list(properties)
                elif type(item) in (dict, list):  # only containers can hold keys
                    pending.append(((*path, key), item, properties[key]))
        elif type(node) is list and "items" in schema:
            pending += [
                ((*path, index), item, schema["items"])
                for index, item in enumerate(node)
                if type(item) in (dict, list)
            ]
