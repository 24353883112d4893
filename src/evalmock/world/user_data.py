"""Data a user brings (`evalmock serve --data`): their lists of cases and their evaluation test
cases, as read."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from evalmock.nouns import counted


@dataclass(frozen=True)
class UserList:
    """The user's cases of one agent's project (every entry of every file that names the pair,
    merged)."""

    agent_id: str
    project_id: str  # lower-case
    cases: tuple[dict[str, Any], ...]
    generation: int = 0  # a hash of the cases as served, in order: it changes when they do


@dataclass(frozen=True)
class UserTestCase:
    """A DigitalOcean evaluation test case of the user's: its versions, oldest first."""

    uuid: str  # lower-case, as requests are looked up
    versions: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class UserData:
    """Everything the data files hold, checked; `generation` identifies their whole content (0: no
    files), each list's `generation` its own."""

    files: tuple[str, ...] = ()
    lists: tuple[UserList, ...] = ()
    test_cases: tuple[UserTestCase, ...] = ()
    generation: int = 0

    @property
    def case_count(self) -> int:
        return sum(len(user_list.cases) for user_list in self.lists)

    def summary(self) -> str:
        """`3 agents, 4 projects, 20 cases, 2 evaluation test cases`, for the console."""
        agents = len({user_list.agent_id for user_list in self.lists})
        counts = (
            (agents, "agent"),
            (len(self.lists), "project"),
            (self.case_count, "case"),
            (len(self.test_cases), "evaluation test case"),
        )
        return ", ".join(counted(count, noun) for count, noun in counts)


NO_DATA = UserData()


def list_generation(cases: Iterable[dict[str, Any]]) -> int:
    """A hash of a list's cases as they are served (their JSON, key order included), in order."""
    digest = hashlib.blake2b(digest_size=8)
    for case in cases:
        encoded = orjson.dumps(case)
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return int.from_bytes(digest.digest(), "big")
