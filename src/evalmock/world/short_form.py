"""Short-form cases of a data file: what a case leaves out, filled in from the seed and its place.

A case may leave out its `id`, `kind`, `projectId`, `runId`, `madeOn`, `expect`, `addedBy`,
`addedAt` and `updatedAt`, a hand case its `expert`, and a `retired` its `reason`, `by` and `at`, so
that a test states only what it is about (`{"retired": {}}` is a retired case). What is left out is
filled consistently with what the case says and with every rule a served case and list keep:

| left out | filled with |
|---|---|
| `kind` | `hand` for an id starting `case-`, `correction` for another id; without an id, drawn |
| `id` | `case-` or `corr-` (by kind) and 12 hex digits, unique in the list, no id of the world's |
| `addedAt` | an active case's `updatedAt`; else before the `retired.at` given; else the next free |
| `updatedAt` | `retired.at` on a retired case, else `addedAt` |
| `retired.at` | the `updatedAt` given, else a time after `addedAt` |
| `expert` | `true` on a hand case (every hand case is an expert's) |
| `projectId` | the list's |
| the rest | drawn as the world draws its own cases |

Each draw is a pure function of the seed, the list (agent and project) and the case's place in it
(its index among the list's cases, across files), so the same file gives the same bytes. Filled
times run newest first from half a day after the world's newest case, at least a second apart and
on no second another case of the list (the world's own or the file's) was added: the list is served
in the file's order. A case that leaves nothing out is served exactly as written.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from evalmock.world.cases import CaseFactory
from evalmock.world.catalog import AGENTS_BY_ID, Agent
from evalmock.world.data_rules import ReadCase, ReadData
from evalmock.world.hashing import splitmix64, stable_hash
from evalmock.world.layout import CORRECTION_ACTIVE, HAND_ACTIVE
from evalmock.world.timeline import NEWEST, STEP, first_rank_older_than, parse_rfc3339, rfc3339
from evalmock.world.world import World

# What a case may leave out, in the document's order (and so the order a filled case is served in).
FILLED = ("id", "kind", "projectId", "runId", "madeOn", "expect", "addedBy", "addedAt", "updatedAt")
RETIREMENT = ("reason", "by", "at")
_ORDER = (*FILLED, "retired", "expert")
_DAY = 86_400
_TOP = NEWEST + _DAY // 2  # before the world's "now", a day after its newest case (churn.py)
_CATEGORY = {"hand": HAND_ACTIVE, "correction": CORRECTION_ACTIVE}


def is_short(case: dict[str, Any]) -> bool:
    """Whether a case leaves out anything that is filled in."""
    retired = case.get("retired")
    return (
        any(key not in case for key in FILLED)
        or (isinstance(retired, dict) and any(key not in retired for key in RETIREMENT))
        or (_kind(case) == "hand" and "expert" not in case)
    )


def shortened(case: dict[str, Any], project_id: str) -> dict[str, Any]:
    """`case` of the list of `project_id` without what loading fills back exactly as it is: its
    projectId, a kind its id implies, an updatedAt that is its addedAt or its retired.at, and a hand
    case's expert (`evalmock fixtures export --short`). A case whose keys are not in the document's
    order stays whole, since a filled case is served in that order."""
    if list(case) != sorted(case, key=lambda key: _ORDER.index(key) if key in _ORDER else 99):
        return case
    retired = case.get("retired")
    implied = {
        "projectId": case.get("projectId") == project_id.lower(),
        "kind": "id" in case and _kind({"id": case["id"]}) == case.get("kind"),
        "updatedAt": case.get("updatedAt")
        == (retired.get("at") if isinstance(retired, dict) else case.get("addedAt")),
        "expert": case.get("kind") == "hand" and case.get("expert") is True,
    }
    return {key: value for key, value in case.items() if not implied.get(key, False)}


def fill_short_forms(data: ReadData, world: World) -> None:
    """Every short-form object case of `data` filled in, in place, as it will join `world`."""
    filled: dict[int, ReadCase] = {}
    for (agent_id, project_id), cases in data.lists().items():
        filler = _ListFiller(world, agent_id, project_id, [read.case for read in cases])
        for place, read in enumerate(cases):
            if is_short(read.case):
                filled[id(read)] = dataclasses.replace(read, case=filler.filled(place, read.case))
    if filled:
        data.cases[:] = [filled.get(id(read), read) for read in data.cases]


def _kind(case: dict[str, Any]) -> str | None:
    """The case's kind as it says it, or as its id implies; None when it says neither."""
    if "kind" in case:
        kind = case["kind"]
        return kind if isinstance(kind, str) else None
    given = case.get("id")
    if isinstance(given, str):
        return "hand" if given.startswith("case-") else "correction"
    return None


def _seconds(value: Any) -> int | None:
    try:
        return parse_rfc3339(value) if isinstance(value, str) else None
    except ValueError:
        return None


class _ListFiller:
    """Fills the short-form cases of one list, in the order of their places."""

    def __init__(
        self, world: World, agent_id: str, project_id: str, cases: list[dict[str, Any]]
    ) -> None:
        self.project_id = project_id
        self.own = world.own_list(agent_id, project_id)
        if self.own is not None:
            self.factory = self.own.factory
            curated = self.own.curated_cases()
        else:
            agent = AGENTS_BY_ID.get(agent_id) or Agent(agent_id, ())
            self.factory = CaseFactory(world.seed, agent, project_id, world.vocabulary)
            curated = []
        self.salt = stable_hash(world.seed, agent_id, project_id, "short-form")
        self.ids = {case["id"] for case in [*cases, *curated] if isinstance(case.get("id"), str)}
        self.taken = {_seconds(case.get("addedAt")) for case in [*cases, *curated]} - {None}
        self.previous = _TOP + 1  # the last time filled below the case before

    def filled(self, place: int, case: dict[str, Any]) -> dict[str, Any]:
        """`case` with what it leaves out filled in, in the document's key order (keys no
        document describes last, for their rule to name)."""
        retired = case.get("retired")
        added = self._added_at(place, case, retired)
        drawn = self.factory.short_form(place, _CATEGORY.get(_kind(case) or ""), added)
        served = {key: case[key] if key in case else drawn[key] for key in FILLED}
        at: Any = None
        if "id" not in case:
            served["id"] = self._free_id(drawn["id"])
        if "projectId" not in case:
            served["projectId"] = self.project_id
        if "addedAt" not in case:
            served["addedAt"] = rfc3339(added)
        if isinstance(retired, dict):
            at = retired.get("at", case.get("updatedAt"))
            if "at" not in retired and "updatedAt" not in case:
                at = rfc3339(added + 600 + splitmix64(self.salt ^ ~place) % _DAY)
            if any(key not in retired for key in RETIREMENT):  # else served as written
                retired = {**self.factory.retirement(place), "at": at, **retired}
            served["retired"] = retired
        elif "retired" in case:
            served["retired"] = retired  # not an object: its schema says so
        if "updatedAt" not in case:
            served["updatedAt"] = at if isinstance(retired, dict) else served["addedAt"]
        if "expert" in case or served["kind"] == "hand":
            served["expert"] = case.get("expert", True)
        served.update((key, value) for key, value in case.items() if key not in served)
        return served

    def _added_at(self, place: int, case: dict[str, Any], retired: Any) -> int:
        """The case's addedAt in Unix seconds: as given, or as filled."""
        given = _seconds(case.get("addedAt"))
        if given is not None:
            return given
        if "addedAt" in case:  # malformed: its rule says so; the rest is drawn from a free time
            return self._free_time(place)
        if isinstance(retired, dict):
            at = _seconds(retired.get("at", case.get("updatedAt")))
            if at is not None:
                return self._free(at - 600 - splitmix64(self.salt ^ place) % _DAY)
        elif (updated := _seconds(case.get("updatedAt"))) is not None:
            self.taken.add(updated)
            return updated  # an active case's updatedAt is its addedAt
        return self._free_time(place)

    def _free_time(self, place: int) -> int:
        """Below the last time filled, about STEP seconds a place, on a free second."""
        candidate = _TOP - place * STEP - splitmix64(self.salt ^ place) % (STEP - 1)
        self.previous = self._free(min(candidate, self.previous - 1))
        return self.previous

    def _free(self, seconds: int) -> int:
        """`seconds`, or the latest second before it that no case of the list was added at."""
        while seconds in self.taken or self._the_world_s(seconds):
            seconds -= 1
        self.taken.add(seconds)
        return seconds

    def _the_world_s(self, seconds: int) -> bool:
        """Whether one of the world's generated cases of this list was added at `seconds`."""
        own = self.own
        if own is None:
            return False
        rank = first_rank_older_than(own.factory.time_base, own.size, seconds)
        return rank < own.size and own.factory.added_at(rank) == seconds

    def _free_id(self, drawn: str) -> str:
        """The drawn id, or the drawn id with a number when the list has it already."""
        chosen, number = drawn, 1
        while chosen in self.ids:
            number += 1
            chosen = f"{drawn}-{number}"
        self.ids.add(chosen)
        return chosen
