"""Record and replay over a service that is not the mock (the fairness suite's independent service):
a browser-like walk of both APIs recorded by `evalmock proxy --record` and by `--har` then
`evalmock fixtures import`, served by `evalmock serve --data --data-only`, and walked again to the
same cases in the same order, under any page size and filter; every version answers as recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from evalmock.cli import main
from harness.fairness.independent_service import Service
from harness.fairness.service_data import PROJECTS, TEST_CASES
from harness.serving import serving
from proxy.running import proxying

from .walking import MOCK_TOKEN, browser, fetch_test_case, replaying, walk

TOKEN = "fair-user"  # a caller of the independent service
FULL = {"include": "retired", "limit": 25}


@dataclass(frozen=True)
class Recorded:
    """What the walk through the proxy saw, and the data files made of it."""

    lists: dict[tuple[str, str], list[dict[str, Any]]]  # every case, as the full walk listed it
    versions: dict[tuple[str, int], dict[str, Any]]  # (uuid, version) -> its body
    latest: dict[str, dict[str, Any]]  # uuid -> the body answered without a version
    recorded: Path  # by proxy --record
    imported: Path  # by --har, then fixtures import


def body(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    return answer.json()["evaluation_test_case"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    folder = tmp_path_factory.mktemp("record")
    service = Service()
    service.use({"equal_added_at"})  # cases tied in pairs on addedAt, ordered by the service
    har, recorded_path = folder / "staging.har", folder / "staging.yaml"
    options = ("--record", str(recorded_path), "--har", str(har))
    with serving(service.app) as upstream, proxying(upstream, *options) as proxy:
        with browser(proxy.base_url, TOKEN, cookie="theme=dark") as client:
            lists = {key: walk(client, *key, **FULL) for key in PROJECTS}
            versions = {
                (uuid, number): body(fetch_test_case(client, uuid, number))
                for uuid, numbers in TEST_CASES.items()
                for number in numbers
            }
            latest = {uuid: body(fetch_test_case(client, uuid)) for uuid in TEST_CASES}
        proxy.session.write_outputs()  # as `kill -USR1` does
    imported = folder / "imported.yaml"
    assert main(["fixtures", "import", "--har", str(har), "-o", str(imported)]) == 0
    yield Recorded(lists, versions, latest, recorded_path, imported)


def test_the_proxy_s_recording_and_the_har_s_import_write_the_same_data(
    recorded: Recorded,
) -> None:
    assert recorded.recorded.read_bytes() == recorded.imported.read_bytes()
    document = yaml.safe_load(recorded.imported.read_text(encoding="utf-8"))
    assert [(e["agentId"], e["projectId"]) for e in document["testSet"]] == list(PROJECTS)
    assert sum(len(e["cases"]) for e in document["testSet"]) == sum(
        len(cases) for cases in recorded.lists.values()
    )


def test_a_walk_of_the_replay_lists_the_recorded_cases_in_the_recorded_order(
    recorded: Recorded,
) -> None:
    with replaying(recorded.imported) as replay, browser(replay, MOCK_TOKEN) as client:
        for (agent, project), cases in recorded.lists.items():
            assert walk(client, agent, project, **FULL) == cases, (agent, project)


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ({"include": "retired", "limit": 7}, lambda case: True),
        ({"limit": 3}, lambda case: "retired" not in case),
        (
            {"kind": "hand", "limit": 4},
            lambda case: case["kind"] == "hand" and not case.get("retired"),
        ),
        (
            {"kind": "correction", "include": "retired", "limit": 100},
            lambda case: case["kind"] == "correction",
        ),
    ],
    ids=["another-page-size", "active-only", "kind-hand", "corrections-with-retired"],
)
def test_the_replay_answers_other_page_sizes_and_filters_over_the_recorded_cases(
    recorded: Recorded, filters: dict[str, Any], kept: Any
) -> None:
    with replaying(recorded.imported) as replay, browser(replay, MOCK_TOKEN) as client:
        for (agent, project), cases in recorded.lists.items():
            expected = [case for case in cases if kept(case)]
            assert walk(client, agent, project, **filters) == expected, (agent, project)


def test_every_recorded_version_answers_as_recorded(recorded: Recorded) -> None:
    with replaying(recorded.imported) as replay, browser(replay, MOCK_TOKEN) as client:
        for (uuid, number), body in recorded.versions.items():
            answer = fetch_test_case(client, uuid, number)
            assert answer.status_code == 200, (uuid, number)
            assert answer.json()["evaluation_test_case"] == body
        for uuid, body in recorded.latest.items():
            assert fetch_test_case(client, uuid).json()["evaluation_test_case"] == body
        # a version the service does not have (b7d2... has only 2 and 5) is none in the replay too
        assert fetch_test_case(client, "b7d2e4a1-6c3f-4b8e-a1d0-9e8f7c6b5a42", 3).status_code == 404


def test_the_json_suffix_writes_json(recorded: Recorded, tmp_path: Path) -> None:
    har = recorded.recorded.parent / "staging.har"
    out = tmp_path / "staging.json"
    assert main(["fixtures", "import", "--har", str(har), "-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == yaml.safe_load(
        recorded.imported.read_text(encoding="utf-8")
    )
