"""The independent service knows every filter and case field the test-set document declares: one it
lacks is named with the table that teaches it (service_data.py's LATER_FIELDS and LATER_FILTERS),
and what that table names the service serves, lists by and binds its cursors to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evalmock.contract.documents import TEST_SET
from evalmock.contract.operations import operation
from evalmock.contract.schemas import component_schema

from ..serving import serving
from . import independent_service, service_data
from .independent_service import TEST_SET_PARAMS, Service
from .service_data import CASES, MAIN_PROJECT

WHERE = "tests/harness/fairness/service_data.py"
LIST = "/v1/agents/acme.drafting/test-set/cases"
AUTH = {"Authorization": "Bearer fair-user"}


def _served_fields(service: Service) -> set[str]:
    return {name for case in CASES for name in service._case(case)}


def test_the_service_takes_every_query_parameter_the_document_declares() -> None:
    missing = sorted(set(operation("test-set").query_parameters()) - TEST_SET_PARAMS)
    assert not missing, (
        f"the document declares the filter(s) {', '.join(missing)}, which the independent service "
        f"refuses as unknown: name each in LATER_FILTERS, its values in LATER_FIELDS, in {WHERE}"
    )


def test_the_service_s_cases_hold_every_field_the_document_declares() -> None:
    declared = set(component_schema(TEST_SET.spec, "TestSetCase")["properties"])
    missing = sorted(declared - _served_fields(Service()))
    assert not missing, (
        f"the document declares the case field(s) {', '.join(missing)}, which no case of the "
        f"independent service holds: give the values its cases hold in LATER_FIELDS, in {WHERE}"
    )


@pytest.fixture
def taught(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The service, taught a field `shade` (`pale`, `dark`) that is also a filter: its base URL."""
    monkeypatch.setattr(service_data, "LATER_FIELDS", {"shade": ("pale", "dark")})
    cases = service_data._cases()
    monkeypatch.setattr(independent_service, "CASES", cases)
    monkeypatch.setattr(independent_service, "LATER_FIELDS", {"shade": ("pale", "dark")})
    monkeypatch.setattr(independent_service, "LATER_FILTERS", frozenset({"shade"}))
    monkeypatch.setattr(independent_service, "TEST_SET_PARAMS", TEST_SET_PARAMS | {"shade"})
    with serving(Service().app) as base_url:
        yield base_url


def _get(base_url: str, **query: Any) -> httpx.Response:
    return httpx.get(
        f"{base_url}{LIST}", params={"projectId": MAIN_PROJECT, **query}, headers=AUTH, timeout=10
    )


def test_a_taught_filter_narrows_the_list_binds_the_cursor_and_refuses_other_values(
    taught: str,
) -> None:
    every = _get(taught, limit=100).json()["data"]
    assert {case["shade"] for case in every} == {"pale", "dark"}
    pale = _get(taught, limit=5, shade="pale").json()
    assert pale["data"] and all(case["shade"] == "pale" for case in pale["data"])
    cursor = pale["nextCursor"]
    assert _get(taught, limit=5, shade="pale", cursor=cursor).status_code == 200
    assert _get(taught, limit=5, shade="dark", cursor=cursor).status_code == 400
    refused = _get(taught, shade="grey")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad-input"
