"""Data files for `evalmock serve --data` tests: valid cases and test cases to start from, written
as JSON or YAML."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from valid import retirement, valid_case, valid_version

AGENT = "shop.checkout"
PROJECT = "0b5e6c1a-7d2f-4e8b-9a31-5c4d3e2f1a0b"
TEST_CASE = "5f0c6d2e-1a2b-4c3d-8e4f-a5b6c7d8e9f0"
FIRST_DAY = datetime(2026, 10, 1, 12, tzinfo=UTC)  # a shop's first case; one more each day


def case(
    case_id: str,
    added_at: str,
    *,
    project: str = PROJECT,
    retired_at: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """A valid TestSetCase (valid.py's): a hand case when the id starts `case-`, else a correction;
    of `project`, added at `added_at`, retired at `retired_at` when asked."""
    built = valid_case(
        "hand" if case_id.startswith("case-") else "correction",
        id=case_id,
        projectId=project,
        runId=f"run-{case_id}",
        madeOn=f"{AGENT}@2026.11.1",
        addedAt=added_at,
        updatedAt=retired_at or added_at,
    )
    if retired_at:
        built["retired"] = retirement(retired_at)
    built.update(changes)
    return built


def version(number: int, uuid: str = TEST_CASE, **changes: Any) -> dict[str, Any]:
    """A valid apiEvaluationTestCase (valid.py's), version `number` of `uuid`, with `2 * number`
    runs so that versions differ."""
    return valid_version(
        **{"test_case_uuid": uuid, "version": number, "total_runs": number * 2, **changes}
    )


def data(
    lists: list[tuple[str, str, list[dict[str, Any]]]] | None = None,
    test_cases: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """A data file's document: (agent, project, cases) lists and uuid -> versions."""
    document: dict[str, Any] = {
        "testSet": [
            {"agentId": agent, "projectId": project, "cases": cases}
            for agent, project, cases in lists or ()
        ]
    }
    if test_cases:
        document["gradient"] = [
            {"test_case_uuid": uuid, "versions": versions} for uuid, versions in test_cases.items()
        ]
    return document


def write(path: Path, document: Any) -> Path:
    """Write `document` as JSON or YAML, by the path's suffix."""
    if path.suffix == ".json":
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def shop(count: int = 6) -> dict[str, Any]:
    """A small shop: `count` cases of one project (hand, corrections, one retired) and a test case
    of 2 versions."""
    cases = [
        case(
            f"{'case' if number % 3 == 0 else 'corr'}-{number:03d}",
            (FIRST_DAY + timedelta(days=number)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        for number in range(count)
    ]
    cases[1] = case("corr-001", "2026-10-02T12:00:00Z", retired_at="2026-10-05T08:00:00Z")
    return data([(AGENT, PROJECT, cases)], {TEST_CASE: [version(1), version(2)]})
