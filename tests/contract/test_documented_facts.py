"""The documents carry the facts of the reference pages that drive behaviour."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from evalmock.contract.documents import APIS, GRADIENT, LEVEL_MARK, QUERY_FACTS, TEST_SET
from evalmock.contract.operations import operation
from evalmock.contract.schemas import component_schema, inline_refs, schema_errors
from valid import valid_case

LIST = TEST_SET.spec["paths"]["/agents/{agentId}/test-set/cases"]["get"]
GET_CASE = GRADIENT.spec["paths"]["/gen-ai/evaluation_test_cases/{test_case_uuid}"]["get"]


def parameter(operation: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in operation["parameters"] if p["name"] == name)


def accepts(spec: dict[str, Any], schema: dict[str, Any], value: Any) -> bool:
    return not list(schema_errors(spec, schema, value))


def list_param_accepts(name: str, value: Any) -> bool:
    return accepts(TEST_SET.spec, parameter(LIST, name)["schema"], value)


def test_limit_is_an_integer_within_the_bounds_and_with_the_default_the_page_states() -> None:
    """The schema's numbers are the page's: read from the page's words the document keeps beside
    them (`page-words`, each found on the page by tests/harness/test_sources.py)."""
    words = " ".join(operation("test-set").page_words("limit"))
    stated = re.search(r"default: (\d+) >= (\d+) <= (\d+)", words)
    assert stated, f"the page's words for limit state no default and bounds: {words!r}"
    default, least, most = map(int, stated.groups())
    limit = parameter(LIST, "limit")
    assert limit["in"] == "query" and not limit.get("required", False)
    assert limit["schema"]["default"] == default
    accepted = [list_param_accepts("limit", v) for v in (least - 1, least, default, most, most + 1)]
    assert accepted == [False, True, True, True, False]
    assert not list_param_accepts("limit", str(default))


@pytest.mark.parametrize(
    "value", ["correction", "hand", "correction,hand", "hand,correction", "hand,hand"]
)
def test_kind_accepts_comma_separated_kinds(value: str) -> None:
    assert list_param_accepts("kind", value)


@pytest.mark.parametrize(
    "value", ["hand,", ",hand", "Hand", "corrections", "", "hand;correction", "hand, correction"]
)
def test_kind_rejects_anything_else(value: str) -> None:
    assert not list_param_accepts("kind", value)


def test_include_allows_only_retired() -> None:
    assert parameter(LIST, "include")["schema"]["enum"] == ["retired"]
    assert not list_param_accepts("include", "archived")


@pytest.mark.parametrize(
    "value",
    [
        "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0",
        "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0",
        "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    ],
)
def test_project_id_accepts_any_uuid_including_the_pages_uppercase_non_v4_example(
    value: str,
) -> None:
    project = parameter(LIST, "projectId")
    assert project["required"] is True and project["schema"]["format"] == "uuid"
    assert list_param_accepts("projectId", value)


@pytest.mark.parametrize(
    "value",
    ["", "not-a-uuid", "2489E9AD2EE28E008EC932D5F69181C0", "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0x"],
)
def test_project_id_rejects_non_uuids(value: str) -> None:
    assert not list_param_accepts("projectId", value)


def test_the_pages_example_uuid_is_the_documented_example() -> None:
    assert parameter(LIST, "projectId")["example"] == "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0"


def test_agent_id_is_a_required_path_string_and_cursor_an_optional_string() -> None:
    assert (
        parameter(LIST, "agentId")["in"] == "path"
        and parameter(LIST, "agentId")["required"] is True
    )
    cursor = parameter(LIST, "cursor")
    assert (
        cursor["in"] == "query"
        and not cursor.get("required", False)
        and cursor["schema"] == {"type": "string"}
    )


def test_page_requires_data_and_has_more_but_not_next_cursor() -> None:
    page = component_schema(TEST_SET.spec, "CasePage")
    assert sorted(page["required"]) == ["data", "hasMore"]
    assert "nextCursor" in page["properties"]


def test_case_required_fields_match_the_page() -> None:
    case = component_schema(TEST_SET.spec, "TestSetCase")
    assert set(case["required"]) == {
        "id",
        "kind",
        "projectId",
        "runId",
        "madeOn",
        "expect",
        "addedBy",
        "addedAt",
        "updatedAt",
    }
    assert {"retired", "expert"} <= set(case["properties"]) - set(case["required"])


def case_ok(case: dict[str, Any]) -> bool:
    return accepts(TEST_SET.spec, {"$ref": "#/components/schemas/TestSetCase"}, case)


def test_expect_needs_at_least_one_part() -> None:
    assert case_ok(valid_case())
    assert not case_ok(valid_case(expect={}))
    assert case_ok(valid_case(expect={"items": [{"key": "case-2", "verdict": "wrong", "rank": 0}]}))


def test_should_call_tool_names_are_1_to_200_chars_and_args_at_most_100_properties() -> None:
    def decisions(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"decisions": {"verdict": "wrong", "shouldCall": [{"tool": tool, "args": args}]}}

    assert case_ok(valid_case(expect=decisions("t" * 200, {f"k{i}": i for i in range(100)})))
    assert not case_ok(valid_case(expect=decisions("t" * 201, {})))
    assert not case_ok(valid_case(expect=decisions("", {})))
    assert not case_ok(valid_case(expect=decisions("t", {f"k{i}": i for i in range(101)})))
    assert not case_ok(
        valid_case(expect={"decisions": {"verdict": "wrong", "shouldCall": [{"tool": "t"}]}})
    )


def test_items_need_a_key_and_a_json_pointer_and_non_negative_rank() -> None:
    def items(**item: Any) -> dict[str, Any]:
        return valid_case(expect={"items": [{"key": "k", "verdict": "right", **item}]})

    assert case_ok(items(pointer="/matches/2", rank=0))
    assert case_ok(items(pointer=""))
    assert not case_ok(items(pointer="matches/2"))
    assert not case_ok(items(rank=-1))
    assert not case_ok(valid_case(expect={"items": [{"verdict": "right"}]}))


def test_retired_needs_reason_by_and_at_and_actors_have_kind_and_id() -> None:
    actor = {"kind": "service", "id": "svc"}
    assert case_ok(valid_case(retired={"reason": "r", "by": actor, "at": "2026-01-02T00:00:00Z"}))
    assert not case_ok(valid_case(retired={"reason": "r", "by": actor}))
    assert not case_ok(valid_case(addedBy={"kind": "robot", "id": "x"}))


def test_error_envelope_requires_code_message_and_request_id_with_object_details() -> None:
    envelope = component_schema(TEST_SET.spec, "ErrorEnvelope")["properties"]["error"]
    assert sorted(envelope["required"]) == ["code", "message", "requestId"]
    assert envelope["properties"]["details"]["type"] == "object"


@pytest.mark.parametrize("status", ["400", "401", "404", "503"])
def test_every_error_response_uses_the_envelope_and_requires_x_request_id(status: str) -> None:
    response = inline_refs(TEST_SET.spec, LIST["responses"][status])
    assert response["content"]["application/json"]["schema"]["required"] == ["error"]
    assert response["headers"]["X-Request-Id"]["required"] is True


def test_503_requires_retry_after_in_whole_seconds() -> None:
    retry_after = inline_refs(TEST_SET.spec, LIST["responses"]["503"])["headers"]["Retry-After"]
    assert retry_after["required"] is True and retry_after["schema"]["type"] == "integer"


def test_next_page_link_carries_next_cursor_into_cursor() -> None:
    link = LIST["responses"]["200"]["links"]["nextPage"]
    assert link["operationId"] == "listTestSetCases"
    assert link["parameters"]["cursor"] == "$response.body#/nextCursor"


@pytest.mark.parametrize("spec", [TEST_SET.spec, GRADIENT.spec])
def test_both_apis_require_bearer_auth(spec: dict[str, Any]) -> None:
    assert spec["security"] == [{"bearerAuth": []}]
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        **spec["components"]["securitySchemes"]["bearerAuth"],
        "type": "http",
        "scheme": "bearer",
    }


def test_gradient_version_parameter_is_the_live_apis_integer_query_parameter() -> None:
    version = parameter(GET_CASE, "evaluation_test_case_version")
    assert version["in"] == "query" and not version.get("required", False)
    assert version["schema"] == {"type": "integer", "format": "int64"}


def test_gradient_path_parameter_is_a_plain_string_so_unknown_ids_are_404s() -> None:
    assert parameter(GET_CASE, "test_case_uuid")["schema"] == {"type": "string"}
    assert "404" in GET_CASE["responses"] and "400" not in GET_CASE["responses"]


def test_gradient_uint64_fields_travel_as_strings() -> None:
    case = component_schema(GRADIENT.spec, "apiEvaluationTestCase")
    dataset = inline_refs(GRADIENT.spec, case["properties"]["dataset"])
    for schema in (
        case["properties"]["created_by_user_id"],
        case["properties"]["updated_by_user_id"],
    ):
        assert schema["type"] == "string" and schema["format"] == "uint64"
    assert dataset["properties"]["file_size"]["allOf"][0]["type"] == "string"
    assert accepts(GRADIENT.spec, case, {"created_by_user_id": "12345"})
    assert not accepts(GRADIENT.spec, case, {"created_by_user_id": 12345})


def test_gradient_enums_are_exactly_the_pages_values() -> None:
    schemas = GRADIENT.spec["components"]["schemas"]
    assert len(schemas["apiEvaluationMetricCategory"]["enum"]) == 6
    assert schemas["apiEvaluationMetricType"]["enum"] == [
        "METRIC_TYPE_UNSPECIFIED",
        "METRIC_TYPE_GENERAL_QUALITY",
        "METRIC_TYPE_RAG_AND_TOOL",
    ]
    assert "METRIC_VALUE_TYPE_PERCENTAGE" in schemas["apiEvaluationMetricValueType"]["enum"]


@pytest.mark.parametrize("status", ["200", "401", "404", "429", "500", "default"])
def test_gradient_ratelimit_headers_are_declared_integers_not_required_and_live(
    status: str,
) -> None:
    headers = inline_refs(GRADIENT.spec, GET_CASE["responses"][status])["headers"]
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
        assert not headers[name].get("required") and headers[name]["schema"]["type"] == "integer"
        assert headers[name][LEVEL_MARK] == "live"


@pytest.mark.parametrize("status", ["401", "404", "429", "500", "default"])
def test_gradient_errors_use_digitaloceans_body_marked_live(status: str) -> None:
    response = inline_refs(GRADIENT.spec, GET_CASE["responses"][status])
    schema = response["content"]["application/json"]["schema"]
    assert sorted(schema["required"]) == ["id", "message"]
    assert "request_id" in schema["properties"]
    assert response[LEVEL_MARK] == "live"


def test_the_page_view_of_digitaloceans_spec_keeps_the_200_and_unspecifies_live_errors() -> None:
    view = GRADIENT.page_spec["paths"]["/gen-ai/evaluation_test_cases/{test_case_uuid}"]["get"][
        "responses"
    ]
    assert set(view) == set(GET_CASE["responses"])  # every status stays documented
    assert not view["200"].get("headers") and "content" in view["200"]
    for status in ("401", "404", "429", "500", "default"):
        assert set(view[status]) == {"description"}


def test_the_test_set_document_states_nothing_only_the_live_service_does() -> None:
    assert TEST_SET.page_spec == TEST_SET.spec


@pytest.mark.parametrize("spec", [TEST_SET.spec, GRADIENT.spec])
def test_both_documents_name_a_contact_and_a_license(spec: dict[str, Any]) -> None:
    assert spec["info"]["contact"]["name"] and spec["info"]["license"]["name"]


def test_gradient_declares_the_genai_read_scope() -> None:
    assert GET_CASE["x-required-scopes"] == ["genai:read"]


def test_the_facts_beyond_the_schemas_are_read_from_the_documents_and_not_served() -> None:
    # What the pages state of each parameter; a filter added later joins these sets.
    test_set = operation("test-set")
    assert {"include", "kind"} <= set(test_set.query_marked("narrows"))
    assert {"projectId", "include", "kind"} <= set(test_set.query_marked("cursor-binds"))
    assert {"projectId", "include", "kind"} <= set(test_set.query_marked("bad-value", "page"))
    assert "limit" in test_set.query_marked("bad-value", "inferred")
    assert {"include", "kind"} <= set(test_set.query_marked("empty-value", "open"))
    assert operation("gradient").query_marked("bad-value", "inferred") == (
        "evaluation_test_case_version",
    )
    for document in APIS.values():
        assert QUERY_FACTS in json.dumps(document.spec)
        assert QUERY_FACTS not in json.dumps(document.served_spec())
