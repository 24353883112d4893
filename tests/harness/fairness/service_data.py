"""The independent service's data: callers, two agents with four lists of cases (one project serves
both agents), three
DigitalOcean test cases with their versions. Plain values, made by simple arithmetic so that every
fact is easy to recompute."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Caller:
    kind: str  # "user" or "service"
    id: str


# Bearer token -> caller. Expired and revoked tokens are known but refused; any other token is made
# up.
CALLERS = {
    "fair-user": Caller("user", "u-1001"),
    "fair-other": Caller("user", "u-2002"),
    "fair-service": Caller("service", "svc-ingest-7"),
    "fair-no-read": Caller("user", "u-3003"),
}
# valid callers without read on any project ("Needs read on the project.")
WITHOUT_READ = frozenset({"u-3003"})
REFUSED_TOKENS = {"fair-expired": "expired", "fair-revoked": "revoked"}

# agent -> its projects (lower-case UUIDs) -> (cases in the project, which of them are retired)
DRAFTING, SEARCH = "acme.drafting", "globex.search"
MAIN_PROJECT = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
SIDE_PROJECT = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"
SEARCH_PROJECT = "c3d4e5f6-a7b8-4c9d-8e0f-a1b2c3d4e5f6"
PROJECTS = {
    # every 18th case retired: 5 retired, 100 active (a multiple of 25)
    (DRAFTING, MAIN_PROJECT): (
        105,
        18,
    ),
    (DRAFTING, SIDE_PROJECT): (12, 5),
    (SEARCH, SEARCH_PROJECT): (10, 4),
    # the side project serves the search agent too: one project id, a list for each agent
    (SEARCH, SIDE_PROJECT): (8, 4),
}
AGENTS = {agent for agent, _ in PROJECTS}
START = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)

# What the page adds after what this service was written for, the one place it learns it: a case
# field -> the values its cases hold, in turn (case n holds values[n % len]); those in
# LATER_FILTERS are also filters of the list of the same name (only the cases holding the value
# asked for, one of these). A field or filter the document declares and these lack is named by
# test_the_service_knows.py. Such as: LATER_FIELDS = {"source": ("manual", "imported")}.
LATER_FIELDS: dict[str, tuple[str, ...]] = {}
LATER_FILTERS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Case:
    """One test-set case as stored; the service renders it (ids, ranks, timestamps) as its
    variations say."""

    number: int  # unique in the whole data set
    agent: str
    project: str
    kind: str  # "correction" or "hand"
    run: str
    made_on: str
    expect: dict[str, Any]
    added_by: Caller
    added_at: datetime
    retired: tuple[str, Caller, datetime] | None  # reason, by, at
    expert: bool
    later: tuple[tuple[str, str], ...] = ()  # (field, value) of each of LATER_FIELDS


def _expect(n: int) -> dict[str, Any]:
    """Five shapes of expectation in turn, plus two at the page's size limits."""
    if n == 7:  # a 200-character tool name and 100 argument properties
        return {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [{"tool": "t" * 200, "args": {f"k{j:02d}": j for j in range(100)}}],
            }
        }
    if n == 8:  # 3990 characters of canonical JSON
        return {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [{"tool": "draft", "args": {"text": "x" * 3980}}],
            }
        }
    shapes: list[dict[str, Any]] = [
        {"decisions": {"verdict": "right"}},
        {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [
                    {"tool": "search_contracts", "args": {"country": "DE"}},
                    {"tool": "ping", "args": {}},
                ],
                "mustNotCall": ["send_email"],
            },
            "answer": {
                "verdict": "wrong",
                "shouldSay": "Cite the governing-law clause.",
                "why": "It was missing.",
            },
        },
        {
            "items": [
                {"key": f"match-{n}-{j}", "pointer": f"/matches/{j}", "rank": j, "verdict": "right"}
                for j in range(3)
            ]
        },
        {
            "answer": {"verdict": "right"},
            "items": [
                {"key": "a/b", "pointer": "/a~1b/~0c", "rank": 0, "verdict": "wrong"},
                {"key": "whole", "pointer": "", "verdict": "right"},
            ],
        },
        {"answer": {"verdict": "wrong", "shouldSay": "Ask for the contract's date first."}},
    ]
    return shapes[n % len(shapes)]


def _cases() -> tuple[Case, ...]:
    cases = []
    number = 0
    for (agent, project), (count, retire_every) in PROJECTS.items():
        for i in range(count):
            number += 1
            kind = "hand" if i % 3 == 0 else "correction"
            added_by = CALLERS["fair-service"] if i % 4 == 1 else CALLERS["fair-user"]
            added_at = START + timedelta(hours=5 * number, seconds=number)
            retired = None
            if i % retire_every == retire_every - 1:
                retired = (
                    "Superseded by a newer case.",
                    CALLERS["fair-user"],
                    added_at + timedelta(days=3),
                )
            cases.append(
                Case(
                    number=number,
                    agent=agent,
                    project=project,
                    kind=kind,
                    run=f"run-{number:05d}",
                    made_on=f"{agent}@2026.{i % 12 + 1}.{i % 5}",
                    expect=_expect(number),
                    added_by=added_by,
                    added_at=added_at,
                    retired=retired,
                    expert=kind == "hand" or i % 7 == 2,
                    later=tuple(
                        (name, values[number % len(values)])
                        for name, values in LATER_FIELDS.items()
                    ),
                )
            )
    return tuple(cases)


CASES = _cases()


def _version(uuid: str, version: int, archived: bool) -> dict[str, Any]:
    """One version of a test case, every field of the page's `APIEvaluationTestCase` filled in."""
    at = (START + timedelta(days=version)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        **({"archived_at": at} if archived else {}),
        "created_at": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "created_by_user_email": "ada@example.com",
        "created_by_user_id": "18446744073709551615",
        "dataset": {
            "created_at": at,
            "dataset_name": f"contracts-v{version}",
            "dataset_uuid": "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6",
            "file_size": str(1024 * version),
            "has_ground_truth": version % 2 == 1,
            "row_count": 40 * version,
        },
        "dataset_name": f"contracts-v{version}",
        "dataset_uuid": "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6",
        "description": "" if version == 1 else f"Version {version} of the drafting checks.",
        "latest_version_number_of_runs": 0 if version == 1 else 3,
        "metrics": [
            {
                "category": "METRIC_CATEGORY_CORRECTNESS",
                "description": "Did it cite the clause?",
                "inverted": False,
                "is_metric_goal": True,
                "metric_name": "citation",
                "metric_rank": 0,
                "metric_type": "METRIC_TYPE_GENERAL_QUALITY",
                "metric_uuid": "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a8b",
                "metric_value_type": "METRIC_VALUE_TYPE_PERCENTAGE",
                "range_max": 100.0,
                "range_min": 0.0,
            }
        ],
        "name": "drafting checks",
        "star_metric": {
            "metric_uuid": "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a8b",
            "name": "citation",
            "success_threshold": 0.75,
            "success_threshold_pct": 75,
        },
        "test_case_uuid": uuid,
        "total_runs": 0 if version == 1 else 5 * version,
        "updated_at": at,
        "updated_by_user_email": "ada@example.com",
        "updated_by_user_id": "42",
        "version": version,
    }


# test case uuid -> its versions (not always 1..n), the second one's first version archived
TEST_CASES = {
    uuid: {
        v: _version(uuid, v, archived=(uuid, v) == ("b7d2e4a1-6c3f-4b8e-a1d0-9e8f7c6b5a42", 2))
        for v in versions
    }
    for uuid, versions in (
        ("5f0c8a0e-3a51-4c7e-9d7b-2f1e0c9a6b11", (1, 2, 3)),
        ("b7d2e4a1-6c3f-4b8e-a1d0-9e8f7c6b5a42", (2, 5)),
        ("0e1d2c3b-4a59-4687-b8c9-d0e1f2a3b4c5", (1,)),
    )
}
