"""What readings of a list that moves during the audit still prove: a case listed by a walk before
the others and by a walk after them was listed throughout, so every walk between lists it; a case
that arrived or was retired between them proves nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalmock.harness.checks.scenario import Walk


@dataclass(frozen=True)
class Readings:
    """Two whole walks of one list: one before the walks compared, one after them."""

    before: Walk
    after: Walk

    @property
    def judgeable(self) -> bool:
        """Whether both walks reached the list's end (a walk stopped at its bound lists a part)."""
        return self.before.complete and self.after.complete

    @property
    def arrived(self) -> list[Any]:
        before = set(self.before.ids)
        return [case for case in self.after.ids if case not in before]

    @property
    def left(self) -> list[Any]:
        after = set(self.after.ids)
        return [case for case in self.before.ids if case not in after]

    @property
    def moved(self) -> bool:
        """Whether the list was seen to move: the two whole walks list other cases. Which of them
        arrived or left, and when, no reading from outside can tell (a replica that lags may list
        a case after a newer one), so nothing more is asked of them."""
        return self.judgeable and set(self.before.ids) != set(self.after.ids)

    @property
    def stable(self) -> set[Any]:
        """The cases both walks list: listed throughout, so every walk between lists them."""
        return set(self.before.ids) & set(self.after.ids)

    def movement(self) -> str:
        """How the list moved, as the report says it."""
        return (
            f"{len(self.arrived)} case(s) arrived and {len(self.left)} left between the first walk "
            f"({len(set(self.before.ids))} cases) and the last ({len(set(self.after.ids))})"
        )

    def unlisted(self, walk: Walk) -> list[Any]:
        """The cases listed throughout that `walk` left out, in the first walk's order."""
        listed, stable = set(walk.ids), self.stable
        return [case for case in self.before.ids if case in stable and case not in listed]
