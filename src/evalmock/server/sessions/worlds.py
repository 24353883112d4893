"""Each session's world in this process: built from the session's spec on first use, and kept,
bounded; a spec of the mock's default world is served by the mock's own world object, so default
sessions cost no world at all."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from evalmock.server.live_world import build_world
from evalmock.server.sessions.records import SessionSpec
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.churn import ChurningWorld
from evalmock.world.data_files import load_document


def build_session_world(spec: SessionSpec) -> World:
    """The world `evalmock serve` builds from the same settings, with the spec's data
    (DataFileError: the data breaks a rule)."""
    world = build_world(ServerSettings(seed=spec.seed, cases=spec.cases, data_only=spec.data_only))
    if spec.data is None:
        return world
    return world.with_data(load_document(spec.data, world))


class SessionWorlds:
    """The worlds sessions are served from in this process, and their moving lists (churn)."""

    def __init__(
        self,
        default_spec: SessionSpec,
        default_world: Callable[[], World],
        limit: int,
        build: Callable[[SessionSpec], World] = build_session_world,
    ) -> None:
        self.default_spec = default_spec
        self._default_key = default_spec.world_key
        self._default_world = default_world
        self._limit = limit
        self._build = build
        self._worlds: OrderedDict[bytes, World] = OrderedDict()
        self._churning: OrderedDict[str, ChurningWorld] = OrderedDict()

    def world(self, spec: SessionSpec) -> World:
        """The spec's world: the mock's own for the default spec, else one built once and kept
        among the `limit` most recently used."""
        key = spec.world_key
        if key == self._default_key:
            return self._default_world()
        world = self._worlds.get(key)
        if world is None:
            world = self._build(spec)
            self._worlds[key] = world
            if len(self._worlds) > self._limit:
                self._worlds.popitem(last=False)
        else:
            self._worlds.move_to_end(key)
        return world

    def churning(self, session_id: str, world: World, every: int) -> ChurningWorld:
        """The session's moving lists over `world`, counted by this process's requests."""
        moving = self._churning.get(session_id)
        if moving is None or moving.world is not world:
            moving = ChurningWorld(world, every)
            self._churning[session_id] = moving
            if len(self._churning) > self._limit:
                self._churning.popitem(last=False)
        else:
            self._churning.move_to_end(session_id)
        return moving

    def forget(self, session_id: str) -> None:
        self._churning.pop(session_id, None)
