"""Bad input never crashes: whatever the query, path or headers, the answer is a 200 or a documented
4xx body."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalmock.world.catalog import EXAMPLE_PROJECT

from .helpers import AUTH, assert_digitalocean_error, assert_envelope, cases_path, evaluation_path

NAMES = st.sampled_from(
    ["projectId", "include", "kind", "limit", "cursor", "evaluation_test_case_version", "x"]
)
VALUES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [EXAMPLE_PROJECT, "retired", "hand,correction", "25", "-1", "1e9", "0x10", "\x00", "%", ""]
    ),
    st.text(alphabet="0123456789", min_size=20, max_size=400),
)
PRINTABLE = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
PREFERENCES = st.lists(
    st.sampled_from(
        [
            "code=200",
            "code=404",
            "code=999",
            "example=page",
            "example=",
            "delay=0",
            "delay=x",
            ";",
            "=",
        ]
    ),
    max_size=4,
).map(", ".join)
AUTHORIZATIONS = st.one_of(
    st.just("Bearer demo-user"),
    st.sampled_from(
        [
            "",
            "Bearer",
            "Bearer  demo-user",
            "bearer demo-user",
            "Token x",
            "Bearer ===",
            "Bearer a=b",
        ]
    ),
    PRINTABLE,
)
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_documented(response: httpx.Response, gradient: bool, prefer: str = "") -> None:
    """No crash: a 200 or a documented error body, and no 5xx but one the request's Prefer asked for
    (RFC 7240: preference names are case-insensitive, so `CODE=500` asks as `code=500` does; /v2
    declares a default answer)."""
    asked = {int(code) for code in re.findall(r"(?i)(?:^|[\s,;])code=(\d+)", prefer)}
    assert response.status_code < 500 or response.status_code in asked, response.text
    if response.status_code == 200:
        return
    if gradient:
        assert_digitalocean_error(response, response.status_code, response.json()["id"])
    else:
        assert_envelope(response, response.status_code, response.json()["error"]["code"])


@FUZZ
@given(params=st.lists(st.tuples(NAMES, VALUES), max_size=6), authorization=AUTHORIZATIONS)
def test_any_query_and_authorization_get_a_documented_answer(
    client: httpx.Client, params: list[tuple[str, str]], authorization: str
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    assert_documented(client.get(cases_path(), params=params, headers=headers), gradient=False)
    assert_documented(client.get(evaluation_path(), params=params, headers=headers), gradient=True)


@FUZZ
@given(segment=st.text(min_size=1, max_size=300), prefer=st.one_of(PRINTABLE, PREFERENCES))
def test_any_path_segment_and_prefer_get_a_documented_answer(
    client: httpx.Client, segment: str, prefer: str
) -> None:
    encoded = quote(segment, safe="")
    headers = {**AUTH, "Prefer": prefer}
    response = client.get(
        cases_path(encoded), params={"projectId": EXAMPLE_PROJECT}, headers=headers
    )
    assert_documented(response, gradient=False, prefer=prefer)
    assert_documented(
        client.get(evaluation_path(encoded), headers=headers), gradient=True, prefer=prefer
    )
