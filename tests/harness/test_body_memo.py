"""A body read before is read from memory: the same bytes give the same reading without parsing them
again, any other bytes (or the same bytes read in another context) are read afresh, only plain JSON
is remembered, and the memory is bounded by the bytes it holds."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from evalmock.harness.checks import exchange as exchange_module
from evalmock.harness.checks.body_memo import BodyMemo
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.checks.outcomes import json_body

URL = "http://service.test/v1/agents/a/test-set/cases?projectId=p"


def exchange(body: bytes) -> Exchange:
    return Exchange("GET", URL, 200, {"content-type": "application/json"}, body)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bodies orjson is asked to parse, from a memory emptied first."""
    exchange_module._PLAIN_JSON.forget()
    seen: list[bytes] = []
    loads = orjson.loads

    def counted(body: bytes) -> Any:
        seen.append(body)
        return loads(body)

    monkeypatch.setattr(exchange_module.orjson, "loads", counted)
    return seen


def test_a_plain_json_body_seen_before_is_not_parsed_again(parses: list[bytes]) -> None:
    body = b'{"data": [{"id": "case-1"}], "hasMore": false}'
    first, again = exchange(body), exchange(bytes(bytearray(body)))  # equal bytes, another object
    assert json_body(first) == {"data": [{"id": "case-1"}], "hasMore": False}
    assert again.plain_json == (True, json_body(first))
    assert parses == [body]


def test_other_bytes_are_parsed_afresh(parses: list[bytes]) -> None:
    assert json_body(exchange(b'{"hasMore": false}')) == {"hasMore": False}
    assert json_body(exchange(b'{"hasMore": true}')) == {"hasMore": True}
    assert len(parses) == 2


def test_a_body_that_is_not_plain_json_is_parsed_every_time(parses: list[bytes]) -> None:
    body = b'{"n": 123456789012345678901234567890}'  # orjson's reading is not the standard parser's
    for _ in range(2):
        assert exchange(body).plain_json == (False, None)
    assert len(parses) == 2
    assert len(exchange_module._PLAIN_JSON) == 0


def test_a_reading_is_remembered_per_context() -> None:
    memo: BodyMemo[str] = BodyMemo(budget=1_000)
    memo.put(b"{}", "passed", (200, "application/json"))
    assert memo.get(b"{}", (200, "application/json")) == "passed"
    assert memo.get(b"{}", (500, "application/json")) is None
    assert memo.get(b"{ }", (200, "application/json")) is None


def test_a_body_larger_than_the_bound_is_never_remembered() -> None:
    memo: BodyMemo[str] = BodyMemo(budget=1_000, largest=10)
    memo.put(b"x" * 11, "read")
    assert memo.get(b"x" * 11) is None
    memo.put(b"x" * 10, "read")
    assert memo.get(b"x" * 10) == "read"


def test_the_memory_forgets_its_oldest_readings_first_once_its_budget_of_bytes_is_spent() -> None:
    memo: BodyMemo[int] = BodyMemo(budget=25, largest=10)
    for number in range(3):
        memo.put(bytes([number]) * 10, number)
    # the third would have passed 25 bytes
    assert len(memo) == 2 and memo.get(bytes([0]) * 10) is None
    assert memo.get(bytes([1]) * 10) == 1 and memo.get(bytes([2]) * 10) == 2
    memo.put(b"x" * 5, 3)  # 25 bytes held: room without forgetting
    memo.put(b"y" * 10, 4)  # the oldest goes, and only it: 10 + 5 + 10 bytes held after it
    assert [memo.get(body) for body in (bytes([1]) * 10, bytes([2]) * 10, b"x" * 5, b"y" * 10)] == [
        None,
        2,
        3,
        4,
    ]
