"""`evalmock fixtures export | list` write the world, or a slice of it, as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from evalmock.cli import main
from evalmock.contract.operations import operation
from evalmock.world import CaseQuery, World
from evalmock.world.catalog import EXAMPLE_AGENT, EXAMPLE_PROJECT
from revised_documents import with_a_run_id_filter


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


def test_a_filter_flag_is_the_document_s_filter_and_the_shorthands_are_the_same(capsys):
    common = ["fixtures", "export", "--cases", "40", "--agent", EXAMPLE_AGENT, "--limit", "9"]
    assert main([*common, "--filter", "kind=hand", "--filter", "include=retired"]) == 0
    by_filter = json.loads(capsys.readouterr().out)
    assert main([*common, "--kind", "hand", "--include-retired"]) == 0
    assert json.loads(capsys.readouterr().out) == by_filter
    assert by_filter["filters"] == {"kind": "hand", "include": "retired", "limit": 9}
    cases = [case for entry in by_filter["testSet"] for case in entry["cases"]]
    assert cases and all(case["kind"] == "hand" for case in cases)
    assert any("retired" in case for case in cases)


def test_a_filter_flag_refuses_a_name_the_document_lacks_and_a_value_it_does_not_allow(capsys):
    filters = operation("test-set").query_marked("narrows")
    assert "nonesuch" not in filters
    assert main(["fixtures", "export", "--filter", "nonesuch=1"]) == 2
    assert f"NAME one of the list's filters: {', '.join(filters)}" in capsys.readouterr().err
    assert main(["fixtures", "export", "--filter", "kind=other"]) == 2
    assert "--filter kind='other': 'other' does not match" in capsys.readouterr().err


def test_a_filter_the_document_gains_is_exported_with_no_change_to_the_code(tmp_path):
    """Through a revision of the document that declares runId, export narrows by it."""
    run_id = next(World(cases=40).iter_cases(CaseQuery(EXAMPLE_AGENT, EXAMPLE_PROJECT)))["runId"]
    argv = ["fixtures", "export", "--cases", "40", "--agent", EXAMPLE_AGENT]
    done = subprocess.run(
        [sys.executable, "-m", "evalmock", *argv, "--filter", f"runId={run_id}"],
        env={**os.environ, "EVALMOCK_OPENAPI_DIR": str(with_a_run_id_filter(tmp_path))},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    cases = [case for entry in json.loads(done.stdout)["testSet"] for case in entry["cases"]]
    assert cases and {case["runId"] for case in cases} == {run_id}
