"""The benchmark's record of the interpreter it measured (its build in its own words, and a
calibration time), and the walks it replays."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import lib  # bench/ is a folder of scripts, not a package


def test_the_interpreter_facts_name_its_build_and_time_a_fixed_piece_of_python() -> None:
    facts = lib.interpreter_facts(sys.executable)
    assert facts["python_build"].startswith(platform.python_version() + " ")
    assert platform.python_compiler() in facts["python_build"]
    assert isinstance(facts["python_calibration_ms"], float)
    assert 0 < facts["python_calibration_ms"] < 10_000


def test_an_interpreter_that_does_not_exist_is_refused_by_name() -> None:
    missing = sys.executable + "-no-such-interpreter"
    with pytest.raises(SystemExit, match="no such interpreter") as refused:
        lib.evalmock_python(missing)
    assert missing in str(refused.value)


def test_a_walk_follows_each_pages_cursor_under_the_same_filters(monkeypatch) -> None:
    asked: list[str] = []

    def get(url: str, token: str | None = None) -> tuple[int, bytes]:
        asked.append(url)
        last = len(asked) % 3 == 0  # every walk is three pages long
        return 200, json.dumps(
            {"data": [], "nextCursor": None if last else f"c{len(asked)}"}
        ).encode()

    monkeypatch.setattr(lib, "get", get)
    server = SimpleNamespace(base="http://mock", test_set_prefix="/v1")
    lines = lib.walk_test_set(server, {}, filters=({"kind": "hand"},), limits=(10,))  # type: ignore[arg-type]
    assert len(lines) == 3
    first, second, third = (parse_qs(urlsplit(url).query) for url in asked)
    assert "cursor" not in first
    assert second["cursor"] == ["c1"] and third["cursor"] == ["c2"]
    assert all(query["kind"] == ["hand"] and query["limit"] == ["10"] for query in (second, third))
