"""Harness fixtures: our own server on a free local port, wrapped in a switch that can plant
defects."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from evalmock.contract.targets import Targets
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World

from .mutants import MutationSwitch
from .serving import serving

MUTABLE_CASES = 200  # per project: enough for several pages, small enough for quick walks
# Tokens the mutable server accepts besides its demo tokens (for the redaction tests).
SECRET_TOKENS = ("s3cret-Token-0123456789", "an0ther-S3cret-987654")


@dataclass(frozen=True)
class MutableServer:
    base_url: str
    switch: MutationSwitch
    world: World
    targets: Targets


@pytest.fixture(scope="session")
def mutable_server() -> Iterator[MutableServer]:
    """Our server (seed 42, 200 cases) in this process; tests set `switch.mutation` to plant a
    defect."""
    world = World(seed=42, cases=MUTABLE_CASES)
    settings = ServerSettings(
        cases=MUTABLE_CASES, tokens=tuple((token, "user") for token in SECRET_TOKENS)
    )
    switch = MutationSwitch(create_app(settings, world=world))
    targets = dataclasses.replace(targets_for(world), sealed_cursors=True)
    with serving(switch) as base_url:
        yield MutableServer(base_url, switch, world, targets)
