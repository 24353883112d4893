"""A YAML data file's items are dumped by PyYAML once each, by the rules' check, and written as that
check read them; the file loads to every case of the recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from data_builders import AGENT, PROJECT, case
from evalmock.cli import main
from evalmock.recording import output
from evalmock.world import World
from evalmock.world.data_files import load_data

from .har_files import entry, har, list_url, page

CASES = 12


def test_each_case_of_a_yaml_import_is_dumped_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [case(f"case-{n}", f"2026-10-{n + 1:02d}T12:00:00Z") for n in range(CASES)]
    recording = har(tmp_path / "staging.har", [entry(list_url(AGENT, PROJECT), 200, page(cases))])
    dumped: list[Any] = []
    dump = output._yaml

    def counting(value: Any) -> str:
        dumped.append(value)
        return dump(value)

    monkeypatch.setattr(output, "_yaml", counting)
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(recording), "-o", str(out)]) == 0
    items = [value for value in dumped if isinstance(value, list)]  # an entry's header is a dict
    assert len(items) == CASES, len(items)
    data = load_data([out], World(generated=False))
    loaded = {c["id"] for user_list in data.lists for c in user_list.cases}
    assert loaded == {c["id"] for c in cases}
