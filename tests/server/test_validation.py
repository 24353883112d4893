"""Request validation's own parts: the query string is read exactly as parse_qsl reads it."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalmock.server.validation import MAX_QUERY_FIELDS, query_pairs

QUERY_STRINGS = st.text(alphabet="ab=&%+2F0 é\n;", max_size=40)


def _parsed(query_string: str) -> list[tuple[str, str]] | type[ValueError]:
    try:
        return parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:
        return ValueError


def _ours(query_string: str) -> list[tuple[str, str]] | type[ValueError]:
    try:
        return query_pairs(query_string)
    except ValueError:
        return ValueError


@given(QUERY_STRINGS)
def test_any_query_string_gives_the_pairs_parse_qsl_gives(query_string: str) -> None:
    assert _ours(query_string) == _parsed(query_string)


@pytest.mark.parametrize(
    "query_string",
    [
        "",
        "&",
        "&&a",
        "a",
        "a=",
        "=b",
        "a=b=c",
        "a=1&a=2",
        "projectId=X&limit=25",
        "k=a%2Cb",
        "q=a+b",
        "a=%zz",
        "&".join(["p=1"] * MAX_QUERY_FIELDS),
        "&".join(["p=1"] * (MAX_QUERY_FIELDS + 1)),
        "&" * MAX_QUERY_FIELDS,
        "&" * (MAX_QUERY_FIELDS - 1),
    ],
)
def test_edge_query_strings_give_the_pairs_parse_qsl_gives(query_string: str) -> None:
    assert _ours(query_string) == _parsed(query_string)


def test_more_fields_than_allowed_are_refused_with_or_without_escapes() -> None:
    assert _ours("&".join(["p=1"] * (MAX_QUERY_FIELDS + 1))) is ValueError
    assert _ours("&".join(["p=%31"] * (MAX_QUERY_FIELDS + 1))) is ValueError
