"""A test case seen in part names the versions not seen with the house's plural: "version 1",
"versions 1, 2", and past MAX_LISTED a count ("12 versions below 13")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalmock.recording.spool import Store
from evalmock.recording.test_cases import MAX_LISTED, RecordedTestCase


@pytest.fixture
def store() -> Iterator[Store]:
    store = Store()
    yield store
    store.close()


def seen(store: Store, versions: set[int], latest: int) -> RecordedTestCase:
    return RecordedTestCase("b7d2e4a1-6c3f-4b8e-a1d0-9e8f7c6b5a42", store, 0, versions, latest)


def test_one_version_not_seen_is_said_in_the_singular(store: Store) -> None:
    assert seen(store, {2, 3}, 3).completeness() == "partial: version 1 not seen"


def test_two_versions_not_seen_are_said_in_the_plural(store: Store) -> None:
    assert seen(store, {3}, 3).completeness() == "partial: versions 1, 2 not seen"


def test_more_versions_not_seen_than_are_listed_are_counted(store: Store) -> None:
    top = MAX_LISTED + 3
    said = seen(store, {top}, top).completeness()
    assert said == f"partial: {top - 1} versions below {top} not seen"


def test_every_version_seen_is_complete(store: Store) -> None:
    assert seen(store, {1, 2}, 2).completeness() == "complete"
