"""A data file written by `fixtures import` or `fixtures export` is the old one or the whole new
one: a write that fails midway (its serialiser raising after some cases are out) leaves the previous
file as it was and no temporary file beside it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from data_builders import AGENT, PROJECT, case
from evalmock.cli import main
from evalmock.recording import output
from evalmock.world import export

from .har_files import entry, har, list_url, page

PREVIOUS = "# the previous data file, whole\ntestSet: []\n"


class SerialiserFailed(Exception):
    pass


def a_recording(tmp_path: Path) -> Path:
    cases = [case(f"case-{n}", f"2026-10-{n + 1:02d}T12:00:00Z") for n in range(5)]
    return har(tmp_path / "staging.har", [entry(list_url(AGENT, PROJECT), 200, page(cases))])


def previous_file(tmp_path: Path, name: str) -> Path:
    out = tmp_path / "out" / name
    out.parent.mkdir()
    out.write_text(PREVIOUS, encoding="utf-8")
    return out


def fails_after_two_items(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data file's serialiser raises once two items went to the file (a screening render, into
    memory, is let through)."""
    item = output.DataFile.item

    def failing(self: output.DataFile, value: dict[str, Any]) -> None:
        item(self, value)
        if not isinstance(self.out, io.StringIO) and self.items == 2:
            self.out.flush()  # what reached the file is on disk, as at a kill
            raise SerialiserFailed

    monkeypatch.setattr(output.DataFile, "item", failing)


@pytest.mark.parametrize("name", ["data.yaml", "data.json"])
def test_an_import_that_fails_midway_leaves_the_previous_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    recording = a_recording(tmp_path)
    out = previous_file(tmp_path, name)
    fails_after_two_items(monkeypatch)
    with pytest.raises(SerialiserFailed):
        main(["fixtures", "import", "--har", str(recording), "-o", str(out)])
    assert out.read_text(encoding="utf-8") == PREVIOUS
    assert [path.name for path in out.parent.iterdir()] == [name]


def test_an_import_that_does_not_fail_replaces_the_previous_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the other side of the test above: the interrupted writer is the one that writes the file
    out = previous_file(tmp_path, "data.yaml")
    assert main(["fixtures", "import", "--har", str(a_recording(tmp_path)), "-o", str(out)]) == 0
    assert "case-4" in out.read_text(encoding="utf-8")
    assert [path.name for path in out.parent.iterdir()] == ["data.yaml"]


def test_an_export_that_fails_midway_leaves_the_previous_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = previous_file(tmp_path, "data.json")
    dumps, calls = export._dumps, []

    def failing(value: Any) -> str:
        calls.append(value)
        if len(calls) == 5:
            raise SerialiserFailed
        return dumps(value)

    monkeypatch.setattr(export, "_dumps", failing)
    with pytest.raises(SerialiserFailed):
        main(["fixtures", "export", "--cases", "20", "-o", str(out)])
    assert out.read_text(encoding="utf-8") == PREVIOUS
    assert [path.name for path in out.parent.iterdir()] == ["data.json"]
