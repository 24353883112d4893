"""Whether a recorded walk saw a whole list is read from the filters the document declares."""

from __future__ import annotations

import pytest

from evalmock.contract.filters import declared_filter, narrowing
from evalmock.recording import lists
from evalmock.recording.lists import Filters, categories

RUN_ID = declared_filter("runId", {"narrows": True, "case-field": "runId", "cursor-binds": True})


def test_a_walk_without_filters_covers_every_active_case_and_no_retired_one() -> None:
    assert Filters.of({}).covers() == categories(held_too=False)
    assert Filters.of({"include": "retired"}).covers() == categories(held_too=True)


def test_a_walk_of_one_kind_covers_that_kind_only() -> None:
    hand = Filters.of({"kind": "hand", "include": "retired"})
    assert hand.covers() == {(False, "hand"), (True, "hand")}  # (include, kind), as declared
    assert str(hand) == "include=retired kind=hand"
    # the same set in another order, or named twice, is the same walk
    assert Filters.of({"kind": "hand,correction,hand"}) == Filters.of({})


def test_a_kind_no_set_reads_as_covers_nothing() -> None:
    assert Filters.of({"kind": "Hand"}).covers() == set()


def test_a_walk_narrowed_by_a_declared_value_filter_completes_no_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lists, "narrowing", lambda: (*narrowing(), RUN_ID))
    narrowed = Filters.of({"runId": "run-7"})
    assert narrowed.covers() == set() and str(narrowed) == "runId=run-7"
    assert Filters.of({}).covers() == categories(held_too=False)
