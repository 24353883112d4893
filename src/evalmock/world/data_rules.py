"""The rules a data file's cases and test cases keep, beyond its frame's schema: each a small named
function.

A case keeps every rule of the world's own cases (the document's schema, the pages' rules and the
world's stricter readings, `evalmock.world.rules`); a list has unique ids, and no `addedAt` of the
world's own cases when it joins one of the world's lists (cases of the file that share an `addedAt`
are served in the file's order, as a recorded service listed them); an evaluation test case has its
document's schema, versions numbered upwards from 1, and a uuid no other test case has.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from evalmock.contract.documents import GRADIENT
from evalmock.contract.lint import pointer
from evalmock.contract.problems import Problem
from evalmock.contract.schemas import schema_validator
from evalmock.contract.spelling import unknown_key
from evalmock.world.data_schema import EVALUATION_TEST_CASE, TEST_SET_CASE, unknown_keys
from evalmock.world.listing import CaseList
from evalmock.world.rules import case_findings, schema_problems
from evalmock.world.timeline import first_rank_older_than, parse_rfc3339
from evalmock.world.wording import described, shown
from evalmock.world.world import World

if TYPE_CHECKING:
    from openapi_schema_validator import OAS30Validator


@dataclass(frozen=True)
class ReadCase:
    """A case as read, with the list it was given in and where it is."""

    path: Path | None  # None: a document given in memory
    pointer: str  # e.g. /testSet/0/cases/3
    agent_id: str
    project_id: str  # the list's, lower-case
    case: Any

    def at(self, inner: str = "") -> str:
        return self.pointer + inner

    @property
    def where(self) -> str:
        """How another problem names this case: `file#/pointer` (`/pointer` in memory)."""
        return _where(self.path, self.pointer)


def _where(path: Path | None, at: str) -> str:
    return at if path is None else f"{path}#{at}"


@dataclass(frozen=True)
class ReadTestCase:
    """An evaluation test case as read, with where it is."""

    path: Path | None
    pointer: str  # e.g. /gradient/1
    uuid: str  # as written
    versions: list[Any]


@dataclass(frozen=True)
class ReadData:
    """Every case and test case of every data file, in file order."""

    cases: list[ReadCase] = field(default_factory=list)
    test_cases: list[ReadTestCase] = field(default_factory=list)
    # every (agent, project) named, cases or not
    list_keys: list[tuple[str, str]] = field(default_factory=list)

    def lists(self) -> dict[tuple[str, str], list[ReadCase]]:
        """The cases grouped by their list (agent and project), each object case once."""
        grouped: dict[tuple[str, str], list[ReadCase]] = {}
        for read in self.cases:
            if isinstance(read.case, dict):
                grouped.setdefault((read.agent_id, read.project_id), []).append(read)
        return grouped


DataRule = Callable[[ReadData, World], Iterator[Problem]]


@functools.cache
def version_validator() -> OAS30Validator:
    """A validator for `#/components/schemas/apiEvaluationTestCase` of the gradient document (built
    once)."""
    return schema_validator(GRADIENT.spec, {"$ref": "#/components/schemas/apiEvaluationTestCase"})


def _seconds(case: dict[str, Any]) -> int | None:
    """The case's addedAt in Unix seconds; None when it is malformed (its own rules say so)."""
    try:
        return parse_rfc3339(case["addedAt"])
    except (KeyError, TypeError, ValueError):
        return None


def _encoded(case: dict[str, Any]) -> bytes:
    """A case's JSON with sorted keys: equal exactly when two cases are the same JSON (1 and 1.0
    differ)."""
    return orjson.dumps(case, option=orjson.OPT_SORT_KEYS)


def _case_id(case: dict[str, Any]) -> str | None:
    return case["id"] if isinstance(case.get("id"), str) else None


# -- each case
# --------------------------------------------------------------------------------------------------
def cases_keep_the_world_rules(data: ReadData, world: World) -> Iterator[Problem]:
    """The document's schema, the pages' rules and the world's stricter readings, as for every case
    served.

    A case `world` already serves from a data file kept them when it was loaded, so on a reload only
    the cases that changed are checked again (checking costs about half a millisecond a case).
    """
    served = {_encoded(case) for user_list in world.data.lists for case in user_list.cases}
    for read in data.cases:
        if served and isinstance(read.case, dict) and _encoded(read.case) in served:
            continue
        # The rules read fields of an object; anything else only the schema can speak about.
        findings = (
            case_findings(read.case) if isinstance(read.case, dict) else schema_problems(read.case)
        )
        for finding in findings:
            yield Problem(read.path, read.at(finding.pointer), finding.message)


def _unknown_key_problems(
    path: Path | None, at: str, value: Any, definition: str
) -> Iterator[Problem]:
    for where, key, known in unknown_keys(value, definition):
        yield Problem(path, at + pointer(*where, key), unknown_key(key, known, quote='"'))


def cases_hold_only_known_keys(data: ReadData, world: World) -> Iterator[Problem]:
    """Every key of a case, at every depth, is one its document describes: a typo is never served
    silently."""
    for read in data.cases:
        yield from _unknown_key_problems(read.path, read.pointer, read.case, TEST_SET_CASE[1])


def cases_are_of_their_list_project(data: ReadData, world: World) -> Iterator[Problem]:
    """A case's projectId is the project of the list it is given in (in any letter case)."""
    for read in data.cases:
        if not isinstance(read.case, dict):
            continue
        given = read.case.get("projectId")
        if isinstance(given, str) and given.lower() != read.project_id:
            yield Problem(
                read.path,
                read.at("/projectId"),
                f"expected the list's projectId {shown(read.project_id)}, got {shown(given)}",
            )


# -- each list
# --------------------------------------------------------------------------------------------------
def _repeats(
    cases: list[ReadCase], key: Callable[[dict[str, Any]], Any]
) -> Iterator[tuple[ReadCase, ReadCase]]:
    """(case, the earlier case of the same key) for each case whose key an earlier one has; None
    keys are skipped."""
    first: dict[Any, ReadCase] = {}
    for read in cases:
        value = key(read.case)
        if value is not None and first.setdefault(value, read) is not read:
            yield read, first[value]


def case_ids_are_unique_in_a_list(data: ReadData, world: World) -> Iterator[Problem]:
    """No two cases of one list share an id, whichever files and entries they come from."""
    for cases in data.lists().values():
        for read, earlier in _repeats(cases, _case_id):
            yield Problem(
                read.path,
                read.at("/id"),
                f"id {shown(read.case['id'])} is already in this list, at {earlier.where}; "
                "give one of them another id",
            )


def _joining_the_world(data: ReadData, world: World) -> Iterator[tuple[CaseList, list[ReadCase]]]:
    """(the world's list, the user's cases of it) for each user list that joins one of the world's
    own."""
    for (agent_id, project_id), cases in data.lists().items():
        own = world.own_list(agent_id, project_id)
        if own is not None:
            yield own, cases


def case_ids_are_not_the_world_s(data: ReadData, world: World) -> Iterator[Problem]:
    """A case added to one of the world's lists has an id none of its generated or curated cases
    has."""
    for own, cases in _joining_the_world(data, world):
        curated = {case["id"] for case in own.curated_cases()}
        for read in cases:
            case_id = _case_id(read.case)
            if case_id is None:
                continue
            rank = own.factory.rank_of(case_id)
            if rank is not None and rank < own.size:
                yield Problem(
                    read.path,
                    read.at("/id"),
                    f"id {shown(case_id)} is a generated case of this list; give the case another "
                    "id, "
                    "or serve an export with --data-only",
                )
            elif case_id in curated:
                yield Problem(
                    read.path,
                    read.at("/id"),
                    f"id {shown(case_id)} is a curated case of this list (fixtures/); "
                    "give the case another id",
                )


def added_ats_do_not_tie_with_the_world_s(data: ReadData, world: World) -> Iterator[Problem]:
    """A case added to one of the world's lists takes a second none of its generated or curated
    cases has."""
    for own, cases in _joining_the_world(data, world):
        curated = {_seconds(case): case["id"] for case in own.curated_cases()}
        for read in cases:
            seconds = _seconds(read.case)
            if seconds is None:
                continue
            rank = first_rank_older_than(own.factory.time_base, own.size, seconds)
            if rank < own.size and own.factory.added_at(rank) == seconds:
                other = f"generated case {shown(own.factory.case_id(rank))}"
            elif seconds in curated:
                other = f"curated case {shown(curated[seconds])}"
            else:
                continue
            yield Problem(
                read.path,
                read.at("/addedAt"),
                f"addedAt {shown(read.case['addedAt'])} is also the addedAt of this list's "
                f"{other}; "
                "a list is ordered by addedAt, so pick another second",
            )


# -- evaluation test cases
# --------------------------------------------------------------------------------------------------
def versions_keep_the_document_schema(data: ReadData, world: World) -> Iterator[Problem]:
    """Every version is an apiEvaluationTestCase of the gradient document."""
    for test_case in data.test_cases:
        for number, version in enumerate(test_case.versions):
            for error in version_validator().iter_errors(version):
                inner = pointer(*error.absolute_path) if error.absolute_path else ""
                yield Problem(
                    test_case.path,
                    f"{test_case.pointer}/versions/{number}{inner}",
                    described(error),
                )


def versions_hold_only_known_keys(data: ReadData, world: World) -> Iterator[Problem]:
    """Every key of a version, at every depth, is one its document describes."""
    for test_case in data.test_cases:
        for number, version in enumerate(test_case.versions):
            yield from _unknown_key_problems(
                test_case.path,
                f"{test_case.pointer}/versions/{number}",
                version,
                EVALUATION_TEST_CASE[1],
            )


def versions_are_numbered_oldest_first(data: ReadData, world: World) -> Iterator[Problem]:
    """Versions are listed oldest first, each saying its number: 1 or more, each above the one
    before. A number may be missing (a recording that never saw it; the mock answers it 404)."""
    for test_case in data.test_cases:
        before = 0
        for index, version in enumerate(test_case.versions):
            if not isinstance(version, dict):
                continue
            number = version.get("version")
            if isinstance(number, bool) or not isinstance(number, int) or number <= before:
                given = shown(number) if "version" in version else "nothing"
                yield Problem(
                    test_case.path,
                    f"{test_case.pointer}/versions/{index}/version",
                    f"expected a version number above {before} (versions are listed oldest "
                    f"first, from 1), got {given}",
                )
            else:
                before = number


def versions_are_of_their_test_case(data: ReadData, world: World) -> Iterator[Problem]:
    """A version's test_case_uuid, when given, is its test case's (in any letter case)."""
    for test_case in data.test_cases:
        for number, version in enumerate(test_case.versions):
            given = version.get("test_case_uuid") if isinstance(version, dict) else None
            if isinstance(given, str) and given.lower() != test_case.uuid.lower():
                yield Problem(
                    test_case.path,
                    f"{test_case.pointer}/versions/{number}/test_case_uuid",
                    f"expected this test case's uuid {shown(test_case.uuid)}, got {shown(given)}",
                )


def test_case_uuids_are_unique(data: ReadData, world: World) -> Iterator[Problem]:
    """No two test cases share a uuid, in any letter case (requests find them in any)."""
    seen: dict[str, ReadTestCase] = {}
    for test_case in data.test_cases:
        other = seen.setdefault(test_case.uuid.lower(), test_case)
        if other is not test_case:
            yield Problem(
                test_case.path,
                f"{test_case.pointer}/test_case_uuid",
                f"test case {shown(test_case.uuid)} is already at "
                f"{_where(other.path, other.pointer)}; merge their versions into one",
            )


def test_case_uuids_are_not_the_world_s(data: ReadData, world: World) -> Iterator[Problem]:
    """A test case's uuid is none of the world's generated test cases'."""
    for test_case in data.test_cases:
        if world.has_own_test_case(test_case.uuid.lower()):
            yield Problem(
                test_case.path,
                f"{test_case.pointer}/test_case_uuid",
                f"test case {shown(test_case.uuid)} is a generated one; give it another uuid, "
                "or serve an export with --data-only",
            )


RULES: tuple[DataRule, ...] = (
    cases_keep_the_world_rules,
    cases_hold_only_known_keys,
    cases_are_of_their_list_project,
    case_ids_are_unique_in_a_list,
    case_ids_are_not_the_world_s,
    added_ats_do_not_tie_with_the_world_s,
    versions_keep_the_document_schema,
    versions_hold_only_known_keys,
    versions_are_numbered_oldest_first,
    versions_are_of_their_test_case,
    test_case_uuids_are_unique,
    test_case_uuids_are_not_the_world_s,
)
