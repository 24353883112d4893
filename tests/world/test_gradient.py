"""DigitalOcean evaluation test cases: valid, versioned 1..n, consistent across versions."""

from __future__ import annotations

import orjson
import pytest

from evalmock.contract.documents import GRADIENT
from evalmock.contract.schemas import component_schema, schema_errors
from evalmock.world.gradient import EXAMPLE_TEST_CASE

ENUMS = {
    "category": "apiEvaluationMetricCategory",
    "metric_type": "apiEvaluationMetricType",
    "metric_value_type": "apiEvaluationMetricValueType",
}
CONSTANT = (
    "test_case_uuid",
    "created_at",
    "created_by_user_id",
    "created_by_user_email",
    "dataset",
    "name",
)


def every_version(world):
    for uuid, versions in world.evaluation_test_case_versions().items():
        yield uuid, [world.evaluation_test_case(uuid, version) for version in versions]


def test_the_reference_pages_uuid_exists_and_there_are_about_a_dozen(world):
    versions = world.evaluation_test_case_versions()
    assert EXAMPLE_TEST_CASE in versions
    assert 10 <= len(versions) <= 15


def test_versions_run_from_one_to_at_most_five(world):
    for numbers in world.evaluation_test_case_versions().values():
        assert numbers == tuple(range(1, len(numbers) + 1)) and 1 <= len(numbers) <= 5
    assert any(len(numbers) > 1 for numbers in world.evaluation_test_case_versions().values())


def test_without_a_version_the_latest_comes_back(world):
    for uuid, bodies in every_version(world):
        assert world.evaluation_test_case(uuid, None) == bodies[-1]
        assert [body["version"] for body in bodies] == list(range(1, len(bodies) + 1))


def test_every_version_is_valid_against_the_document(world):
    schema = component_schema(GRADIENT.spec, "apiGetEvaluationTestCaseResponse")
    for _, bodies in every_version(world):
        for body in bodies:
            assert [
                e.message
                for e in schema_errors(GRADIENT.spec, schema, {"evaluation_test_case": body})
            ] == []


def test_fields_stay_consistent_across_versions(world):
    for _, bodies in every_version(world):
        for field in CONSTANT:
            assert len({repr(body[field]) for body in bodies}) == 1, field
        updated = [body["updated_at"] for body in bodies]
        assert updated == sorted(updated) and len(set(updated)) == len(updated)
        assert all(body["updated_at"] >= body["created_at"] for body in bodies)
        totals = [body["total_runs"] for body in bodies]
        assert totals == sorted(totals)


def test_datasets_and_metrics_agree_with_themselves(world):
    spec_enums = {
        field: set(GRADIENT.spec["components"]["schemas"][name]["enum"])
        for field, name in ENUMS.items()
    }
    for _, bodies in every_version(world):
        for body in bodies:
            assert body["dataset"]["dataset_name"] == body["dataset_name"]
            assert body["dataset"]["dataset_uuid"] == body["dataset_uuid"]
            assert body["dataset"]["file_size"].isdigit()
            assert body["created_by_user_id"].isdigit() and body["updated_by_user_id"].isdigit()
            for metric in body["metrics"]:
                for field, allowed in spec_enums.items():
                    assert metric[field] in allowed
            star = body["star_metric"]
            assert 0 <= star["success_threshold_pct"] <= 100
            goals = [metric for metric in body["metrics"] if metric["is_metric_goal"]]
            assert [(g["metric_uuid"], g["metric_name"]) for g in goals] == [
                (star["metric_uuid"], star["name"])
            ]


def test_some_test_cases_are_archived(world):
    archived = [bodies for _, bodies in every_version(world) if "archived_at" in bodies[-1]]
    assert archived and len(archived) < len(world.evaluation_test_case_versions())
    for bodies in archived:
        assert all(body["archived_at"] >= body["updated_at"] for body in bodies)


@pytest.mark.parametrize(
    ("uuid", "version"),
    [
        ("00000000-0000-4000-8000-000000000000", None),
        (EXAMPLE_TEST_CASE.upper(), None),
        ("not a uuid", None),
        ("", None),
        (EXAMPLE_TEST_CASE, 0),
        (EXAMPLE_TEST_CASE, -1),
        (EXAMPLE_TEST_CASE, 6),
        (EXAMPLE_TEST_CASE, 2**63),
        (EXAMPLE_TEST_CASE, True),
    ],
)
def test_unknown_test_cases_and_versions_are_none(world, uuid, version):
    assert world.evaluation_test_case(uuid, version) is None


def test_returned_bodies_are_copies(world):
    world.evaluation_test_case(EXAMPLE_TEST_CASE, None)["name"] = "changed"
    assert world.evaluation_test_case(EXAMPLE_TEST_CASE, None)["name"] != "changed"


def test_each_version_encoded_once_is_that_version_as_json(world):
    for uuid, versions in world.evaluation_test_case_versions().items():
        for version in (None, *versions):
            encoded = world.encoded_evaluation_test_case(uuid, version)
            assert encoded == orjson.dumps(world.evaluation_test_case(uuid, version))
    assert world.encoded_evaluation_test_case(EXAMPLE_TEST_CASE, 99) is None
    assert world.encoded_evaluation_test_case("no-such-test-case", None) is None
