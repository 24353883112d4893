"""The DigitalOcean evaluation test cases a recording saw: every version answered, which version
was the latest when no version was asked for, and which versions were answered 404 (none such)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalmock.nouns import counted, noun_for
from evalmock.recording.answers import Source
from evalmock.recording.spool import Store

MAX_LISTED = 10  # versions not seen named one by one; more are counted


@dataclass
class RecordedTestCase:
    uuid: str  # lower-case, as the mock looks it up
    store: Store  # holds each version's body, under `key`
    key: int
    versions: set[int] = field(default_factory=set)
    latest: int | None = None  # the highest version answered to a request without one
    absent: set[int] = field(default_factory=set)  # versions answered 404

    def version(self, body: dict[str, Any], text: str, source: Source, asked: int | None) -> None:
        number = body["version"]
        self.versions.add(number)
        self.store.keep_version(self.key, number, text, source)
        if asked is None:
            self.latest = number if self.latest is None else max(self.latest, number)

    def ordered(self) -> Iterator[tuple[dict[str, Any], Source]]:
        """Oldest first, as a data file lists them, read from the store one by one."""
        return self.store.versions(self.key)

    def completeness(self) -> str:
        """`complete`, or `partial: ...` naming the versions not seen and whether the latest is
        known."""
        top = self.latest if self.latest is not None else max(self.versions, default=0)
        known = {n for n in (*self.versions, *self.absent) if 1 <= n <= top}
        said = []
        # a hostile service may number a version 10**18: the numbers are listed only when few
        if top - len(known) > MAX_LISTED:
            said.append(f"{counted(top - len(known), 'version')} below {top} not seen")
        elif top > len(known):
            unseen = [n for n in range(1, top + 1) if n not in known]
            said.append(f"{noun_for(len(unseen), 'version')} {_numbers(unseen)} not seen")
        if self.latest is None:
            said.append("the latest version unknown (never asked for without a version)")
        return "partial: " + "; ".join(said) if said else "complete"


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers)
