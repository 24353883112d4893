"""What readings of a list that moves during the audit still prove: a case listed by a walk before
the others and by a walk after them was listed throughout, so every walk between lists it; a case
that arrived or was retired between them (or is dated while they ran) proves nothing. And where two
walks of a list part."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalmock.harness.checks.scenario import Walk
from evalmock.nouns import counted, noun_for


def listed_count(walk: Walk) -> int | None:
    """How many different cases a whole walk listed (None for one stopped at its bound)."""
    return len(set(walk.ids)) if walk.complete else None


@dataclass(frozen=True)
class Readings:
    """Two whole walks of one list: one before the walks compared, one after them."""

    before: Walk
    after: Walk
    # cases added or retired while the walks ran, by their own dates on the service's clock: the
    # list moved even where the two walks list the same cases
    dated: tuple[Any, ...] = ()

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
        return self.judgeable and (set(self.before.ids) != set(self.after.ids) or bool(self.dated))

    @property
    def stable(self) -> set[Any]:
        """The cases both walks list: listed throughout, so every walk between lists them."""
        return set(self.before.ids) & set(self.after.ids)

    def movement(self) -> str:
        """How the list moved, as the report says it."""
        said = (
            f"{counted(len(self.arrived), 'case')} arrived and {len(self.left)} left between the "
            "first walk "
            f"({len(set(self.before.ids))} cases) and the last ({len(set(self.after.ids))})"
        )
        if self.dated:
            dated = len(self.dated)
            are = noun_for(dated, "is", plural="are")
            said += f"; {counted(dated, 'case')} {are} dated while the walks ran"
        return said

    def unlisted(self, walk: Walk) -> list[Any]:
        """The cases listed throughout that `walk` left out, in the first walk's order."""
        listed, stable = set(walk.ids), self.stable
        return [case for case in self.before.ids if case in stable and case not in listed]


def differences(a: Walk, b: Walk) -> str:
    """The cases only one of two walks lists, a few of each."""
    only_a, only_b = (
        sorted(map(str, set(a.ids) - set(b.ids))),
        sorted(map(str, set(b.ids) - set(a.ids))),
    )
    return (
        f"{len(a.ids)} cases against {len(b.ids)}; only in the first: {only_a[:5]}; only in the "
        f"second: {only_b[:5]}"
    )


def first_parting(
    walk: Walk, full: Walk, full_what: str, required: set[Any] | None = None
) -> tuple[str, int]:
    """Where `walk` first parts from `full`, by page and neighbouring cases, and the number of that
    page in `walk` (its request reproduces it: a case skipped between two pages shows on the page
    after the boundary). Cases with equal addedAt may come in either order, so a case is placed by
    the cases around it that both walks list. With `required`, only those cases are looked for."""
    page_of: dict[Any, int] = {}
    for number, body in enumerate(walk.pages):
        # read as Walk.ids reads them, so that both name the same ids
        for case in body.get("data") or []:
            page_of.setdefault((case if isinstance(case, dict) else {}).get("id"), number)
    full_ids = full.ids
    for position, case_id in enumerate(full_ids):
        if case_id in page_of or (required is not None and case_id not in required):
            continue
        before = next((c for c in reversed(full_ids[:position]) if c in page_of), None)
        after = next((c for c in full_ids[position + 1 :] if c in page_of), None)
        number = page_of[after] if after is not None else len(walk.pages) - 1
        around = [
            f"after {before!r} (page {page_of[before] + 1})"
            if before is not None
            else "before every case",
            f"before {after!r} (page {page_of[after] + 1})" if after is not None else "at the end",
        ]
        return (
            f"first missing: {case_id!r}, case {position + 1} of the walk at {full_what}, which "
            "this walk should "
            f"list {' and '.join(around)}"
        ), number
    in_full = set(full_ids)
    number, case_id = next((n, c) for c, n in page_of.items() if c not in in_full)
    return (
        f"first extra: {case_id!r}, on page {number + 1}, in no page of the walk at {full_what}",
        number,
    )
