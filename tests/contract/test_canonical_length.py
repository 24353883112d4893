"""canonical_length, which measures a shouldCall's args, is the length of canonical_json in both
readings."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
import pytest

from evalmock.contract.case_rules import canonical_json, canonical_length

TRICKY: list[Any] = [
    {},
    [],
    {"q": "plain", "n": 3, "ok": True, "none": None, "list": [1, "two", False]},
    {"quote": '"', "backslash": "\\", "controls": "".join(map(chr, range(32))), "del": "\x7f"},
    {"non-ascii": "café ü 日本語 🙂", "separators": "\u2028\u2029", "bom": "\ufeff"},
    {"é": 1, "a": {"z": [], "b": {}}},
    {"whole": 1.0, "big": 1e16, "fraction": 0.5, "small": 1.5e-07, "negative": -2.0},
    {"nan": float("nan"), "infinity": float("inf")},
    {"huge": 2**64, "very negative": -(2**63) - 1, "largest": 2**64 - 1, "smallest": -(2**63)},
    {"surrogate": "\ud800"},
    {1: "an integer key", "b": 2},
    MappingProxyType({"a mapping": "not a dict"}),
    [[[[["deep"]]]]],
    "x" * 4000,
    True,
    None,
]


@pytest.mark.parametrize("ascii", [False, True])
@pytest.mark.parametrize("value", TRICKY, ids=range(len(TRICKY)))
def test_canonical_length_is_the_length_of_canonical_json(value: Any, ascii: bool) -> None:
    try:
        expected = len(canonical_json(value, ascii=ascii))
    except (
        TypeError
    ) as refused:  # keys that do not sort, a mapping the standard encoder does not write
        with pytest.raises(type(refused)):
            canonical_length(value, ascii=ascii)
    else:
        assert canonical_length(value, ascii=ascii) == expected


def test_orjson_writes_every_code_point_as_the_shorter_reading_does() -> None:
    """What canonical_length rests on: orjson escapes each character (surrogates aside, which it
    refuses) exactly as the standard encoder does without ensure_ascii, so equal texts give equal
    lengths."""
    text = "".join(chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF)
    assert orjson.dumps(text).decode("utf-8") == canonical_json(text, ascii=False)
