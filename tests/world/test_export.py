"""`evalmock fixtures export | list` write the world, or a slice of it, as JSON."""

from __future__ import annotations

import json

from evalmock.cli import main
from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT


def test_export_of_the_whole_world_holds_every_list_and_the_gradient(capsys):
    assert main(["fixtures", "export", "--seed", "3", "--cases", "20"]) == 0
    exported = json.loads(capsys.readouterr().out)
    world = World(seed=3, cases=20)
    assert exported["seed"] == 3 and exported["casesPerProject"] == 20
    assert len(exported["testSet"]) == sum(
        len(world.project_ids(agent)) for agent in world.agent_ids()
    )
    first = exported["testSet"][0]
    assert first["cases"] == list(world.iter_cases(CaseQuery(first["agentId"], first["projectId"])))
    assert {entry["test_case_uuid"] for entry in exported["gradient"]} == set(
        world.evaluation_test_case_versions()
    )


def test_export_of_a_slice_applies_its_filters(capsys):
    argv = [
        "fixtures",
        "export",
        "--cases",
        "50",
        "--agent",
        EXAMPLE_AGENT,
        "--project",
        EXAMPLE_PROJECT.upper(),
        "--include-retired",
        "--kind",
        "hand",
        "--limit",
        "7",
    ]
    assert main(argv) == 0
    exported = json.loads(capsys.readouterr().out)
    (only,) = exported["testSet"]
    assert only["projectId"] == EXAMPLE_PROJECT and "gradient" not in exported
    expected = list(
        World(cases=50).iter_cases(
            CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT, True, frozenset({"hand"}))
        )
    )
    assert only["cases"] == expected[:7]


def test_export_writes_to_a_file(tmp_path):
    target = tmp_path / "world.json"
    assert (
        main(["fixtures", "export", "--cases", "5", "--agent", "globex.search", "-o", str(target)])
        == 0
    )
    assert {
        entry["agentId"] for entry in json.loads(target.read_text(encoding="utf-8"))["testSet"]
    } == {"globex.search"}


def test_export_refuses_unknown_agents_projects_and_kinds(capsys):
    assert main(["fixtures", "export", "--agent", "acme.unknown"]) == 2
    assert main(["fixtures", "export", "--project", "00000000-0000-4000-8000-000000000000"]) == 2
    assert main(["fixtures", "export", "--kind", "hand,other"]) == 2
    assert "acme.unknown" in capsys.readouterr().err


def test_list_names_every_curated_case(capsys):
    assert main(["fixtures", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    world = World(cases=1)
    assert len(lines) == len(world.curated)
    assert all(item.case["id"] in line for item, line in zip(world.curated, lines, strict=True))
