"""A recording never fills in what a service left out: a recorded case missing a field is left out
of the data file with its HAR entry, not completed as a hand-written short-form case would be."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_builders import AGENT, PROJECT, case
from evalmock.world import World
from evalmock.world.data_files import load_data

from .har_files import entry, list_url, page
from .test_import import imported


def test_a_recorded_case_missing_a_field_is_left_out_not_filled_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = case("case-whole", "2026-10-05T12:00:00Z")
    partial = case("case-partial", "2026-10-04T12:00:00Z")
    del partial["runId"]
    summary = imported(
        tmp_path, [entry(list_url(AGENT, PROJECT), 200, page([whole, partial]))], capsys
    )
    data = load_data([tmp_path / "data.yaml"], World(generated=False))
    assert [c["id"] for user_list in data.lists for c in user_list.cases] == ["case-whole"]
    assert any(
        line.startswith(f"  staging.har entry 0 (GET {list_url(AGENT, PROJECT)}): /: ")
        and '"runId" is missing' in line
        for line in summary.splitlines()
    ), summary
