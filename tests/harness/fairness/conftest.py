"""The independent service served on a free 127.0.0.1 port for the fairness suite, and its
targets."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

import pytest

from evalmock.contract.targets import Targets, targets_from_dict

from ..serving import serving
from .independent_service import Service
from .moving_list import COUNTED_AT, TIES, MovingList
from .service_data import CASES, PROJECTS, REFUSED_TOKENS, TEST_CASES

TOKEN, SECOND_TOKEN = "fair-user", "fair-other"  # two of the service's CALLERS
NO_READ_TOKEN = "fair-no-read"  # a caller of the service without read on any project
REFUSED = {why: token for token, why in REFUSED_TOKENS.items()}  # "expired" -> its expired token


def fairness_targets(*, sealed_cursors: bool, counted_at: datetime | None = None) -> Targets:
    """What a targets file says of the independent service, in the file's shape, recomputed from its
    data; with `counted_at`, each count says when it held (active_cases_at)."""
    projects = []
    for agent, project in PROJECTS:
        cases = [c for c in CASES if (c.agent, c.project) == (agent, project)]
        active = [c for c in cases if c.retired is None]
        projects.append(
            {
                "agent_id": agent,
                "project_id": project,
                "has_retired": len(active) < len(cases),
                "has_hand": any(c.kind == "hand" for c in active),
                "has_corrections": any(c.kind == "correction" for c in active),
                "active_cases": len(active),
            }
        )
        if counted_at is not None:
            projects[-1]["active_cases_at"] = counted_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    raw = {
        "auth": {
            "token": TOKEN,
            "second_token": SECOND_TOKEN,
            "expired_token": REFUSED["expired"],
            "revoked_token": REFUSED["revoked"],
            "no_read_token": NO_READ_TOKEN,
        },
        "test_set": {"sealed_cursors": sealed_cursors, "projects": projects},
        "gradient": {
            "test_cases": [
                {"uuid": uuid, "versions": sorted(versions)}
                for uuid, versions in TEST_CASES.items()
            ]
        },
    }
    return targets_from_dict(raw, source="fairness targets")


@dataclass(frozen=True)
class Independent:
    """The served independent service; `varied(...)` switches its variations for one block."""

    base_url: str
    service: Service

    @contextmanager
    def varied(self, variations: Iterable[str]) -> Iterator[Service]:
        self.service.use(variations)
        try:
            yield self.service
        finally:
            self.service.use(())

    @contextmanager
    def moving(
        self, motions: Iterable[str], defects: Iterable[str] = (), variations: Iterable[str] = ()
    ) -> Iterator[MovingList]:
        """The main project as a list in use (its cases tied in pairs on addedAt), for one block;
        the targets still say what the stored data holds."""
        moving = MovingList(motions, defects, self.service.clock)
        self.service.use({TIES, *variations})
        self.service.moving = moving
        try:
            yield moving
        finally:
            self.service.moving = None
            self.service.use(())

    def targets(self, *, dated: bool = False) -> Targets:
        """The service's targets; `dated`: each count with the moment it held (COUNTED_AT)."""
        return fairness_targets(
            sealed_cursors="unsealed_cursors" not in self.service.variations,
            counted_at=COUNTED_AT if dated else None,
        )


@pytest.fixture(scope="module")
def independent() -> Iterator[Independent]:
    service = Service()
    with serving(service.app) as base_url:
        yield Independent(base_url, service)
