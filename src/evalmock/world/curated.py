"""Hand-curated fixture cases (fixtures/*.json): loaded, placed in their agent's project, validated
loudly."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalmock.exits import EvalmockError
from evalmock.world.rules import case_problems
from evalmock.world.timeline import parse_rfc3339


class FixtureError(EvalmockError, ValueError):
    """A fixture file or case that does not hold; the message names the file and the case's
    index."""


@dataclass(frozen=True)
class CuratedCase:
    """One fixture case, placed: the agent and project it belongs to, and why it exists."""

    source: str  # "file.json#3"
    agent_id: str
    project_id: str
    note: str
    case: dict[str, Any]


def load_curated(
    directory: Path, projects: Mapping[str, Sequence[str]], *, rules_passed: bool = False
) -> list[CuratedCase]:
    """Every case of every `*.json` in `directory` (sorted by name), placed in `projects` (agent ->
    ids).

    `rules_passed`: these very files passed every case rule before (world/start_cache.py), so the
    rules are not applied again; where each case goes is checked all the same.
    """
    if not directory.is_dir():
        raise FixtureError(f"{directory}: the fixtures folder does not exist")
    curated: list[CuratedCase] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        for index, entry in enumerate(_entries(path)):
            where = f"{path.name}#{index}"
            placed = _place(entry, projects, f"{path}: case #{index}", where, rules_passed)
            key = f"{placed.agent_id} {placed.project_id} {placed.case['id']}"
            if key in seen:
                raise FixtureError(
                    f"{path}: case #{index}: id {placed.case['id']!r} repeats {seen[key]}"
                )
            seen[key] = where
            curated.append(placed)
    return curated


def _entries(path: Path) -> list[Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FixtureError(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise FixtureError(f'{path}: expected an object with a "cases" array')
    return document["cases"]


def _place(
    entry: Any,
    projects: Mapping[str, Sequence[str]],
    label: str,
    where: str,
    rules_passed: bool = False,
) -> CuratedCase:
    if not isinstance(entry, dict) or not isinstance(entry.get("case"), dict):
        raise FixtureError(f'{label}: expected {{"agentId", "project", "note", "case"}}')
    agent_id = entry.get("agentId")
    if agent_id not in projects:
        raise FixtureError(f"{label}: unknown agentId {agent_id!r}; agents: {', '.join(projects)}")
    project_id = _project(entry.get("project"), projects[agent_id], label)
    case = dict(entry["case"])
    if case.setdefault("projectId", project_id).lower() != project_id:
        raise FixtureError(
            f"{label}: projectId {case['projectId']!r} is not the placement's project {project_id}"
        )
    case["projectId"] = project_id
    problems = [] if rules_passed else case_problems(case)
    try:
        if parse_rfc3339(case["addedAt"]) % 2:
            problems.append(
                "a curated case's addedAt is on an even second (generated cases take the odd ones)"
            )
    except (KeyError, TypeError, ValueError):
        pass  # already reported by the schema and timestamp rules
    if problems:
        raise FixtureError(f"{label} ({case.get('id')!r}): " + "; ".join(problems))
    return CuratedCase(where, agent_id, project_id, str(entry.get("note", "")), case)


def _project(project: Any, choices: Sequence[str], label: str) -> str:
    """A project by its UUID or by its index among the agent's projects (their ids derive from the
    seed)."""
    if isinstance(project, int) and not isinstance(project, bool) and 0 <= project < len(choices):
        return choices[project]
    if isinstance(project, str) and project.lower() in choices:
        return project.lower()
    raise FixtureError(
        f"{label}: project {project!r} is neither an index below {len(choices)} nor one of "
        f"{choices}"
    )
