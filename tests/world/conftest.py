"""Shared worlds for the world tests: small, so brute force over every case stays fast."""

from __future__ import annotations

import pytest

from evalmock.world import World

SMALL = 90  # generated cases per project: two full layout blocks and a partial one


@pytest.fixture(scope="session")
def world() -> World:
    return World(seed=42, cases=SMALL)


@pytest.fixture(scope="session")
def default_world() -> World:
    return World()
