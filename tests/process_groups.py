"""How `dev.py test` (pytest-xdist's --dist loadgroup) spreads the tests over processes: each test
on the next free process, but for the container tests, all in one, which share the image they build
and the one Docker engine.

pytest-xdist 3.8's own loadgroup reads xdist_group marks by renaming each test's node id, which
pytest 9 no longer lets a plugin do: the groups are named here, by node id, instead."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# node ids' beginnings whose tests run in one process, each group by its name
GROUPS = {"tests/containers/": "containers"}


def process_group(nodeid: str) -> str:
    """The work unit a test belongs to: its group's name, or the test alone."""
    for beginning, group in GROUPS.items():
        if nodeid.startswith(beginning):
            return group
    return nodeid


class GroupScheduling(LoadScopeScheduling):
    """LoadScopeScheduling whose scopes are process_group's."""

    def _split_scope(self, nodeid: str) -> str:
        return process_group(nodeid)
