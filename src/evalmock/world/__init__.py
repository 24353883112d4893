"""The world: deterministic, lazily generated data served by the mock (no HTTP here)."""

from evalmock.world.curated import FixtureError
from evalmock.world.world import CaseQuery, EncodedPage, Page, ProjectFacts, World

__all__ = ["CaseQuery", "EncodedPage", "FixtureError", "Page", "ProjectFacts", "World"]
