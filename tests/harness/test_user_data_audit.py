"""The audit passes a server that serves only a user's data file: the world's rules held for user
data too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from data_builders import shop, write
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import Audit
from evalmock.server.app import create_app
from evalmock.server.live_world import build_world
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from shared import LIMIT

from .serving import serving

# enough active cases for every pagination check: more than one page at the default limit
CASES = LIMIT["default"] + 5


def test_the_audit_passes_a_server_of_user_data_only(tmp_path: Path) -> None:
    settings = ServerSettings(
        data_files=(str(write(tmp_path / "shop.yaml", shop(CASES))),), data_only=True
    )
    world = build_world(settings)
    targets = dataclasses.replace(targets_for(world), sealed_cursors=True)
    with serving(create_app(settings, world)) as base_url:
        results = run_audit(
            Audit(
                base_url=base_url,
                targets=targets,
                token="demo-user",
                second_token="demo-other",
                max_examples=5,
                policy=Policy(strict=True, profile=LIVE_PROFILE),
            )
        )
    assert results.tallies[("test-set", "walk_yields_every_case_once")].ran
    assert results.tallies[("gradient", "each_version_is_that_version")].ran
    assert results.conforms, [f"{f.check.name}: {f.title}" for f in results.failures]
    # One project (no second list to reuse a cursor on): nothing else may wait for a fact (the
    # versions are DigitalOcean's example, metrics and all).
    assert {skip.check.name for skip in results.skips} == {
        "cursor_is_bound_to_the_list",
        "cursor_is_bound_to_the_agent",
    }
