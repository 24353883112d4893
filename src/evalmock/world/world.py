"""The World facade: agents, projects, paged test-set cases and gradient test cases for one seed."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from evalmock.contract.filters import filters, narrowing
from evalmock.defaults import DEFAULT_CASES, DEFAULT_SEED
from evalmock.paths import fixtures_dir as default_fixtures_dir
from evalmock.world.cases import CaseFactory
from evalmock.world.catalog import AGENTS, AGENTS_BY_ID, Agent, project_ids
from evalmock.world.curated import CuratedCase, load_curated
from evalmock.world.gradient import build_test_cases
from evalmock.world.hashing import stable_hash
from evalmock.world.layout import CategoryFilter
from evalmock.world.listing import CaseList, encode
from evalmock.world.user_data import NO_DATA, UserData
from evalmock.world.vocabulary import Vocabulary, build_vocabulary

ALL_KINDS = frozenset({"correction", "hand"})


@dataclass(frozen=True)
class CaseQuery:
    """One request of a list: its agent and project, and the value read of each filter the document
    declares (contract/filters.py)."""

    agent_id: str
    project_id: str  # any case; the world compares lower-cased
    # The filters on the fields the generator lays out by category (CATEGORY_FIELDS)
    include_retired: bool = False
    kinds: frozenset[str] = field(default=ALL_KINDS)
    # Every other declared filter given, as (parameter, value read), in the document's order: the
    # world pages these by an index of their case field (listing.CaseList.indexed_sources).
    others: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def asked(cls, agent_id: str, project_id: str, filters: Mapping[str, str]) -> CaseQuery:
        """The query a request of the list makes: its project, in lower case, and each declared
        filter, by its parameter's name (values as sent, which the document has validated)."""
        read = {f.field: (f.name, f.read(filters.get(f.name))) for f in narrowing()}
        kinds = read.pop("kind", ("", ALL_KINDS))[1]
        include_retired = read.pop("retired", ("", False))[1]
        return cls(
            agent_id,
            project_id.lower(),
            include_retired=bool(include_retired),
            kinds=frozenset(kinds),
            others=tuple((name, value) for name, value in read.values() if value is not None),
        )

    def value(self, name: str) -> Any:
        """A declared filter's value read (JSON-ready): the list's key, lower-cased; the kinds,
        sorted; whether retired cases are in; another's as asked (None when left out)."""
        declared = filters()[name]
        if declared.list_key:
            return self.project_id.lower()
        if declared.field == "kind":
            return tuple(sorted(self.kinds))
        if declared.field == "retired":
            return self.include_retired
        return dict(self.others).get(name)

    def bound(self, names: Iterable[str]) -> tuple[Any, ...]:
        """What a cursor of this list is bound to, per parameter named: the same list and filters
        however a request spells them (a project in either letter case, kinds in any order)."""
        return tuple(self.value(name) for name in names)

    def admits(self, case: Mapping[str, Any]) -> bool:
        """Whether a case of the list matches every filter (each as its declaration says)."""
        return all(f.admits(case, self.value(f.name)) for f in narrowing())

    def equal(self) -> tuple[tuple[str, Any], ...]:
        """The filters beside the categories, as (case field, value): what the list's index
        pages."""
        declared = filters()
        return tuple((declared[name].field, value) for name, value in self.others)


@dataclass(frozen=True)
class Page:
    cases: list[dict[str, Any]]  # JSON-ready TestSetCase objects, newest added first
    next_position: int | None  # None on the last page; else pass it back as `after`


@dataclass(frozen=True)
class EncodedPage:
    cases: list[bytes]  # each TestSetCase as compact JSON (orjson's bytes for `Page.cases`' dicts)
    next_position: int | None


@dataclass(frozen=True)
class ProjectFacts:
    agent_id: str
    project_id: str
    has_retired: bool
    has_hand: bool
    has_corrections: bool
    active_cases: int | None
    counted_at: int | None = None  # unix seconds at which active_cases holds


class World:
    """Everything the mock serves, as a pure function of the seed (and the number of cases per
    project), plus the data a user brings (`with_data`).

    `generated=False` leaves out the generated agents, the curated fixtures and the generated test
    cases: such a world serves only the user's data. A world is never changed once built; a reload
    builds another.
    """

    def __init__(
        self,
        seed: int = DEFAULT_SEED,
        cases: int = DEFAULT_CASES,
        fixtures_dir: Path | None = None,
        *,
        generated: bool = True,
        vocabulary: Vocabulary | None = None,
        fixtures_passed: bool = False,
    ) -> None:
        if cases < 1:
            raise ValueError(f"cases must be at least 1, got {cases}")
        self.seed = seed
        self.cases = cases
        self.generated = generated
        # `vocabulary`: the seed's pools drawn earlier, else drawn here; `fixtures_passed`: the
        # fixtures passed every case rule at an earlier start (both kept by world/start_cache.py).
        self.vocabulary = vocabulary if vocabulary is not None else build_vocabulary(seed)
        agents = AGENTS if generated else ()
        self._projects: dict[str, tuple[str, ...]] = {
            agent.id: project_ids(seed, agent) for agent in agents
        }
        self.curated: list[CuratedCase] = (
            load_curated(
                fixtures_dir or default_fixtures_dir(), self._projects, rules_passed=fixtures_passed
            )
            if generated
            else []
        )
        self._lists: dict[tuple[str, str], CaseList] = {}
        for agent in agents:
            for project_id in self._projects[agent.id]:
                factory = CaseFactory(seed, agent, project_id, self.vocabulary)
                placed = [
                    c.case
                    for c in self.curated
                    if (c.agent_id, c.project_id) == (agent.id, project_id)
                ]
                self._lists[agent.id, project_id] = CaseList(factory, cases, placed)
        self._test_cases = build_test_cases(seed, self.vocabulary) if generated else {}
        self._encoded_test_cases = _encoded(self._test_cases)
        self.data: UserData = NO_DATA
        # Each list's generation: what a cursor of it seals, so that a cursor outlives a change of
        # other lists and never one of its own (or another world's list of the same ids).
        self._generations = {key: stable_hash(seed, cases, *key, "list") for key in self._lists}
        # what any user data is added to
        self._own = (
            self._projects,
            self._lists,
            self._test_cases,
        )
        self._own_generations = self._generations
        self._project_sets = _project_sets(self._projects)

    def with_data(self, data: UserData) -> World:
        """A world of this one's generated and curated data and the user's `data` (in place of any
        it had).

        `data` must have been checked against this world (`evalmock.world.data_files.load_data`), so
        none of its ids or `addedAt`s clashes with this world's own.
        """
        projects, lists, test_cases = self._own
        world = copy.copy(self)
        world.data = data
        world._projects = dict(projects)
        world._lists = dict(lists)
        world._generations = dict(self._own_generations)
        for user_list in data.lists:
            agent_id, project_id = user_list.agent_id, user_list.project_id
            own_generation = self._own_generations.get((agent_id, project_id), 0)
            world._generations[agent_id, project_id] = stable_hash(
                own_generation, user_list.generation
            )
            if project_id not in world._projects.get(agent_id, ()):
                world._projects[agent_id] = (*world._projects.get(agent_id, ()), project_id)
            own = lists.get((agent_id, project_id))
            if own is not None:
                world._lists[agent_id, project_id] = CaseList(
                    own.factory, own.size, own.curated_cases() + list(user_list.cases)
                )
            else:
                agent = AGENTS_BY_ID.get(agent_id) or Agent(agent_id, ())
                factory = CaseFactory(self.seed, agent, project_id, self.vocabulary)
                world._lists[agent_id, project_id] = CaseList(factory, 0, list(user_list.cases))
        world._test_cases = {
            **test_cases,
            **{test_case.uuid: test_case.versions for test_case in data.test_cases},
        }
        world._encoded_test_cases = _encoded(world._test_cases)
        world._project_sets = _project_sets(world._projects)
        return world

    def list_generation(self, query: CaseQuery) -> int:
        """The generation of the list the query reads: it changes exactly when the list's cases do
        (0 for a project the agent does not have)."""
        return self._generations.get((query.agent_id, query.project_id.lower()), 0)

    def lists_changed_since(self, earlier: World) -> list[tuple[str, str]]:
        """The (agent, project) of every list whose cases differ from `earlier`'s (added, removed
        or changed): those whose cursors `earlier` issued are refused here."""
        keys = self._generations.keys() | earlier._generations.keys()
        return sorted(
            key for key in keys if self._generations.get(key) != earlier._generations.get(key)
        )

    def own_list(self, agent_id: str, project_id: str) -> CaseList | None:
        """The list of generated and curated cases that user cases of this agent and project would
        join."""
        return self._own[1].get((agent_id, project_id.lower()))

    def has_own_test_case(self, uuid: str) -> bool:
        """Whether a generated test case has this uuid (lower-case)."""
        return uuid in self._own[2]

    # Test set
    # -----------------------------------------------------------------------------------------

    def agent_ids(self) -> list[str]:
        return list(self._projects)

    def has_agent(self, agent_id: str) -> bool:
        return agent_id in self._projects

    def project_ids(self, agent_id: str) -> list[str]:
        """The agent's projects, lower-case UUIDs; KeyError for an unknown agent."""
        return list(self._projects[agent_id])

    def projects_of(self, agent_id: str) -> frozenset[str] | None:
        """The agent's projects (lower-case) as a set, or None for an unknown agent; built once per
        world."""
        return self._project_sets.get(agent_id)

    def case_list(self, query: CaseQuery) -> CaseList | None:
        """The list the query reads (None for a project the agent does not have); KeyError for an
        unknown agent."""
        if query.agent_id not in self._projects:
            raise KeyError(query.agent_id)
        return self._lists.get((query.agent_id, query.project_id.lower()))

    def page(self, query: CaseQuery, after: int | None, limit: int) -> Page:
        """Up to `limit` matching cases after position `after` (None: from the start), in O(limit).

        KeyError for an unknown agent; an empty last page for a project the agent does not have;
        ValueError for a position that is not in the list or a limit below 1.
        """
        page = self.encoded_page(query, after, limit)
        return Page([orjson.loads(case) for case in page.cases], page.next_position)

    def encoded_page(self, query: CaseQuery, after: int | None, limit: int) -> EncodedPage:
        """`page`, with each case already encoded as JSON: what a server sends, without decoding it
        first."""
        case_list = self.case_list(query)
        if case_list is None:
            if limit < 1:
                raise ValueError(f"limit must be at least 1, got {limit}")
            if after is not None:
                raise ValueError(f"position {after!r} is not in this list (it is empty)")
            return EncodedPage([], None)
        page = case_list.page(category_filter(query), after, limit, query.equal())
        return EncodedPage(page.cases, page.next_position)

    def iter_cases(self, query: CaseQuery) -> Iterator[dict[str, Any]]:
        """Every matching case, newest added first (lazily: a large world is long)."""
        case_list = self.case_list(query)
        if case_list is not None:
            yield from case_list.iter_cases(category_filter(query), query.equal())

    def count_cases(self, query: CaseQuery) -> int:
        """How many cases match, exactly and cheaply."""
        case_list = self.case_list(query)
        return 0 if case_list is None else case_list.count(category_filter(query), query.equal())

    def project_facts(self) -> list[ProjectFacts]:
        facts = []
        for (agent_id, project_id), case_list in self._lists.items():

            def count(
                kinds: frozenset[str], include_retired: bool, case_list: CaseList = case_list
            ) -> int:
                return case_list.count(CategoryFilter.of(kinds, include_retired))

            everything = count(ALL_KINDS, True)
            facts.append(
                ProjectFacts(
                    agent_id=agent_id,
                    project_id=project_id,
                    has_retired=everything > count(ALL_KINDS, False),
                    has_hand=count(frozenset({"hand"}), True) > 0,
                    has_corrections=count(frozenset({"correction"}), True) > 0,
                    active_cases=count(ALL_KINDS, False),
                    counted_at=case_list.counted_at(),
                )
            )
        return facts

    # Gradient
    # -----------------------------------------------------------------------------------------

    def evaluation_test_case(
        self, test_case_uuid: str, version: int | None
    ) -> dict[str, Any] | None:
        """That version (None: the latest) of the test case, or None when either is unknown."""
        found = self._test_case_version(test_case_uuid, version)
        return None if found is None else copy.deepcopy(self._test_cases[found[0]][found[1]])

    def encoded_evaluation_test_case(
        self, test_case_uuid: str, version: int | None
    ) -> bytes | None:
        """`evaluation_test_case` as compact JSON (encoded once, at start)."""
        found = self._test_case_version(test_case_uuid, version)
        return None if found is None else self._encoded_test_cases[found[0]][found[1]]

    def _test_case_version(
        self, test_case_uuid: str, version: int | None
    ) -> tuple[str, int] | None:
        """(uuid, index of the version), or None when either is unknown."""
        versions = self._test_cases.get(test_case_uuid) if isinstance(test_case_uuid, str) else None
        if versions is None:
            return None
        if version is None:
            return test_case_uuid, len(versions) - 1
        if isinstance(version, bool) or not isinstance(version, int):
            return None
        # a data file's versions may skip a number (a recording that never saw it)
        index = version - 1 if 1 <= version <= len(versions) else len(versions) - 1
        while index >= 0 and versions[index].get("version", index + 1) > version:
            index -= 1
        if index < 0 or versions[index].get("version", index + 1) != version:
            return None
        return test_case_uuid, index

    def evaluation_test_case_versions(self) -> dict[str, tuple[int, ...]]:
        return {
            uuid: tuple(v.get("version", n) for n, v in enumerate(versions, start=1))
            for uuid, versions in self._test_cases.items()
        }


def _encoded(test_cases: dict[str, Any]) -> dict[str, tuple[bytes, ...]]:
    """Each version of each test case as compact JSON, encoded once (a reload encodes its world's
    anew)."""
    return {
        uuid: tuple(encode(version) for version in versions)
        for uuid, versions in test_cases.items()
    }


def _project_sets(projects: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    return {agent_id: frozenset(ids) for agent_id, ids in projects.items()}


def category_filter(query: CaseQuery) -> CategoryFilter:
    return CategoryFilter.of(frozenset(query.kinds) & ALL_KINDS, query.include_retired)
