"""The world being served: built from the settings, and replaced whole when the user's data files
change.

A request reads `LiveWorld.world` once and works on that world to the end, so a reload never changes
the data under a request in flight. A reload checks the files first and swaps only a world built
from valid ones; with any problem it raises DataFileError and the previous world stays. Each list
keeps its own generation (`World.list_generation`), so a swap refuses the cursors of the lists it
changed and of no other. A session's world is another object than the one held here: a reload
never reaches it.
"""

from __future__ import annotations

from evalmock.paths import fixtures_dir
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.data_files import load_data
from evalmock.world.start_cache import (
    fixtures_passed_before,
    kept_vocabulary,
    remember_fixtures_passed,
)


def build_world(settings: ServerSettings) -> World:
    """The generated world (none with `data_only`) with the data files added; DataFileError lists
    any problem."""
    fixtures = fixtures_dir()
    passed = not settings.data_only and fixtures_passed_before(fixtures, settings.seed)
    world = World(
        seed=settings.seed,
        cases=settings.cases,
        fixtures_dir=fixtures,
        generated=not settings.data_only,
        vocabulary=kept_vocabulary(settings.seed),
        fixtures_passed=passed,
    )
    if world.generated and not passed:
        # they did: World raises FixtureError otherwise
        remember_fixtures_passed(fixtures, settings.seed)
    if not settings.data_files:
        return world
    return world.with_data(load_data(settings.data_files, world))


class LiveWorld:
    """Holds the world the handlers serve; only `reload` replaces it."""

    def __init__(self, world: World, data_files: tuple[str, ...] = ()) -> None:
        self.world = world
        self.data_files = data_files

    def reload(self) -> bool:
        """Read the data files again; True when the served world changed (DataFileError: it did
        not)."""
        current = self.world
        data = load_data(self.data_files, current)
        if data.generation == current.data.generation:
            return False  # saved again without a change: keep the world, and its cursors
        self.world = current.with_data(data)
        return True
