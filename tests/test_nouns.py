"""A count is said with its noun in the singular for exactly one, and in the plural otherwise."""

from __future__ import annotations

import pytest

from evalmock.nouns import counted, noun_for


@pytest.mark.parametrize(
    ("number", "spec", "said"),
    [
        (1, "", "1 second"),
        (1.0, "g", "1 second"),
        (0, "", "0 seconds"),
        (2, "", "2 seconds"),
        (0.5, "g", "0.5 seconds"),
        (1.0, ".3f", "1.000 seconds"),  # a measured time is not exactly one
        (3600.0, "g", "3600 seconds"),
    ],
)
def test_a_count_takes_the_singular_only_when_it_reads_1(
    number: float, spec: str, said: str
) -> None:
    assert counted(number, "second", spec) == said


def test_a_noun_whose_plural_is_not_an_s_is_given_it() -> None:
    assert counted(2, "entry", plural="entries") == "2 entries"
    assert counted(1, "entry", plural="entries") == "1 entry"


def test_a_noun_before_what_it_counts_follows_the_same_rule() -> None:
    assert noun_for(1, "version") == "version"
    assert noun_for(2, "version") == "versions"
    assert noun_for(1.0, "second", ".3f") == "seconds"
    assert noun_for(2, "entry", plural="entries") == "entries"
