"""A served world as a targets file: the demo tokens and every known project and test case, for
`contract`."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from evalmock.contract.targets import ProjectTarget, Targets, TestCaseTarget, dump_targets
from evalmock.server.auth import (
    EXPIRED_TOKEN,
    NO_READ_TOKEN,
    OTHER_TOKEN,
    REVOKED_TOKEN,
    USER_TOKEN,
)
from evalmock.world import World


def targets_for(world: World, base_url: str | None = None) -> Targets:
    """The targets of `world`, served at `base_url` (the URL `evalmock serve` listens on)."""
    projects = tuple(
        ProjectTarget(
            agent_id=facts.agent_id,
            project_id=facts.project_id,
            has_retired=facts.has_retired,
            has_hand=facts.has_hand,
            has_corrections=facts.has_corrections,
            active_cases=facts.active_cases,
            active_cases_at=None
            if facts.counted_at is None
            else datetime.fromtimestamp(facts.counted_at, UTC),
        )
        for facts in world.project_facts()
    )
    test_cases = tuple(
        TestCaseTarget(uuid=uuid, versions=versions)
        for uuid, versions in world.evaluation_test_case_versions().items()
    )
    return Targets(
        projects=projects,
        test_cases=test_cases,
        token=USER_TOKEN,
        second_token=OTHER_TOKEN,
        expired_token=EXPIRED_TOKEN,
        revoked_token=REVOKED_TOKEN,
        no_read_token=NO_READ_TOKEN,
        sealed_cursors=True,
        base_url=base_url,
    )


def rewrite_targets(path: str, world: World, base_url: str | None = None) -> None:
    """After a reload, the targets file names what is served now; a failure to write is said, not
    raised."""
    try:
        dump_targets(targets_for(world, base_url), path)
    except OSError as exc:
        print(
            f"evalmock serve: cannot write {path}: {exc.strerror or exc}",
            file=sys.stderr,
            flush=True,
        )
