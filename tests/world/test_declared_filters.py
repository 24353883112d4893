"""A filter the document declares is honoured from its declaration alone: read into the query, bound
into the cursor, paged by the list's index at a flat cost, and matched by the test helper."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from evalmock.contract.filters import declared_filter, filters, narrowing
from evalmock.world import CaseQuery, World
from evalmock.world import world as world_module
from evalmock.world.churn import ChurningWorld
from evalmock.world.listing import CaseList
from evalmock.world.world import category_filter

from . import helpers
from .helpers import every_case, matches

AGENT = "acme.drafting"
RUN_ID = declared_filter(
    "runId", {"narrows": True, "case-field": "runId", "cursor-binds": True, "bad-value": "page"}
)


@pytest.fixture
def with_run_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """The document as it would be with an optional `runId` filter declared after `kind`."""
    declared = {**filters(), "runId": RUN_ID}
    monkeypatch.setattr(world_module, "filters", lambda: declared)
    monkeypatch.setattr(world_module, "narrowing", lambda: (*narrowing(), RUN_ID))
    monkeypatch.setattr(helpers, "narrowing", lambda: (*narrowing(), RUN_ID))


def _first_run_id(world: World, project: str, rank: int = 0) -> str:
    cases = list(world.iter_cases(CaseQuery(AGENT, project, include_retired=True)))
    return str(cases[rank]["runId"])


def test_the_query_reads_a_declared_filter_and_binds_it(with_run_id: None) -> None:
    query = CaseQuery.asked(AGENT, "P", {"runId": "run-1", "kind": "hand"})
    assert query.others == (("runId", "run-1"),)
    assert query.bound(("projectId", "include", "kind", "runId")) == (
        "p",
        False,
        ("hand",),
        "run-1",
    )
    # left out: bound as such, and every case passes it
    plain = CaseQuery.asked(AGENT, "p", {})
    assert plain.others == () and plain.bound(("runId",)) == (None,)
    assert plain.admits({"kind": "hand", "runId": "run-2"})
    assert not query.admits({"kind": "hand", "runId": "run-2"})


def test_the_world_lists_exactly_the_cases_a_declared_filter_admits(with_run_id: None) -> None:
    world = World(seed=7, cases=400)
    project = world.project_ids(AGENT)[0]
    for run_id in (_first_run_id(world, project), _first_run_id(world, project, 5), "run-none"):
        for include in ({}, {"include": "retired"}):
            query = CaseQuery.asked(AGENT, project, {"runId": run_id, **include})
            expected = [c for c in every_case(world, AGENT, project) if matches(c, query)]
            assert helpers.walk(world, query, [1, 2]) == expected
            assert world.count_cases(query) == len(expected)
            assert all(case["runId"] == run_id for case in expected)
    assert expected == []  # "run-none" is no case's


def test_a_list_s_index_is_built_once_and_then_a_page_reads_no_case(
    with_run_id: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flat cost: one read of every case when the first page of a declared filter is asked, none
    for any page after, whatever the list's size."""
    reads: list[int] = []
    original = CaseList.field_values

    def counted(self: CaseList, source: int, fields: tuple[str, ...]) -> Any:
        reads.append(source)
        return original(self, source, fields)

    monkeypatch.setattr(CaseList, "field_values", counted)
    for size in (200, 2_000):
        world = World(seed=7, cases=size)
        project = world.project_ids(AGENT)[0]
        total = world.case_list(CaseQuery(AGENT, project)).total  # type: ignore[union-attr]
        run_id = _first_run_id(world, project, 3)
        reads.clear()
        query = CaseQuery.asked(AGENT, project, {"runId": run_id, "include": "retired"})
        world.page(query, None, 25)
        assert len(reads) == total  # built: every case read once
        reads.clear()
        for kind in ("hand", "correction", None):
            asked = {"runId": "run-other", **({"kind": kind} if kind else {})}
            world.page(CaseQuery.asked(AGENT, project, asked), None, 25)
            world.count_cases(CaseQuery.asked(AGENT, project, asked))
        assert reads == []  # the same index, whatever the value and the kinds


def test_the_kind_and_retired_filters_never_build_an_index(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("the categories page without an index")

    monkeypatch.setattr(CaseList, "field_values", refuse)
    world = World(seed=7, cases=2_000)
    project = world.project_ids(AGENT)[0]
    query = CaseQuery.asked(AGENT, project, {"kind": "hand", "include": "retired"})
    assert world.page(query, None, 100).cases


def test_a_churning_list_applies_a_declared_filter_to_its_arrivals_too(
    with_run_id: None,
) -> None:
    world = World(seed=7, cases=60)
    project = world.project_ids(AGENT)[0]
    churning = ChurningWorld(world, every=1)
    everything = CaseQuery(AGENT, project, include_retired=True)
    for _ in range(5):  # five arrivals
        churning.encoded_page(everything, None, 1)
    arrived = orjson.loads(churning.encoded_page(everything, None, 1).cases[0])
    query = CaseQuery.asked(AGENT, project, {"runId": arrived["runId"], "include": "retired"})
    page = churning.encoded_page(query, None, 10)
    assert [orjson.loads(c)["id"] for c in page.cases] == [arrived["id"]]
    assert churning.count_cases(query) == 1
    assert category_filter(query).accepted  # the categories still apply beside it


# Only these are drawn without the rest of the case (CaseFactory.field); any other field is read
# from the whole case, so comparing it with the whole case's would compare a value with itself.
@pytest.mark.parametrize("name", ["runId", "projectId"])
def test_a_field_drawn_alone_is_the_whole_case_s(name: str) -> None:
    """What an index reads of a generated case is what the case says, field by field."""
    world = World(seed=7, cases=300)
    project = world.project_ids(AGENT)[0]
    factory = world.case_list(CaseQuery(AGENT, project)).factory  # type: ignore[union-attr]
    for rank in range(300):
        assert factory.field(rank, name) == factory.case(rank).get(name)
