"""What may go into a data file: nothing that holds a secret of the traffic, and nothing the data
file's own rules refuse, each left out with the answer it came from and why."""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import Refused
from evalmock.recording.answers import Source
from evalmock.world.data_files import DataFileError, load_data
from evalmock.world.world import World

Item = tuple[dict[str, Any], Source]  # a case or a version, and the answer that showed it
AT = re.compile(r"^/(testSet|gradient)/(\d+)(?:/(cases|versions)/(\d+))?")


@dataclass
class Draft:
    """The data file to write, each case and version with its source, in the file's order."""

    lists: list[tuple[str, str, list[Item]]]  # agentId, projectId, cases
    test_cases: list[tuple[str, list[Item]]]  # test_case_uuid, versions

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.lists:
            data["testSet"] = [
                {"agentId": agent, "projectId": project, "cases": [case for case, _ in items]}
                for agent, project, items in self.lists
            ]
        if self.test_cases:
            data["gradient"] = [
                {"test_case_uuid": uuid, "versions": [version for version, _ in items]}
                for uuid, items in self.test_cases
            ]
        return data


def holds_a_secret(value: Any, redactor: Redactor) -> bool:
    """Whether the redactor would change anything of `value`: a secret-named field, or a secret of
    the traffic (a token, a cookie, a key) echoed in any string or key."""
    if redactor.json(value) != value:
        return True
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if redactor.text(item) != item:
                return True
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return False


def without_secrets(draft: Draft, redactor: Redactor, refused: list[Refused]) -> Draft:
    """The draft without the cases and versions that hold a secret: refused, never redacted (a
    placeholder in place of a value would serve something the service never said)."""

    def keep(items: list[Item]) -> list[Item]:
        kept = []
        for value, source in items:
            if holds_a_secret(value, redactor):
                refused.append(Refused(source, "it holds a secret of the traffic; left out"))
            else:
                kept.append((value, source))
        return kept

    return Draft(
        [(agent, project, keep(items)) for agent, project, items in draft.lists],
        [(uuid, kept) for uuid, items in draft.test_cases if (kept := keep(items))],
    )


@functools.cache
def _data_only_world() -> World:
    return World(generated=False)


def rule_problems(text: str, suffix: str) -> list[tuple[str, str]]:
    """(JSON pointer, message) of each data-file rule the text breaks, read as `serve --data` reads
    a file of that suffix."""
    with tempfile.TemporaryDirectory(prefix="evalmock-record-") as folder:
        path = Path(folder) / f"recording{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            # what the service left out is refused, never filled in: it never said it
            load_data([path], _data_only_world(), short_form=False)
        except DataFileError as exc:
            return [(problem.pointer, problem.message) for problem in exc.problems]
    return []


def within_the_rules(
    draft: Draft, render: Callable[[Draft], str], suffix: str, refused: list[Refused]
) -> str:
    """The text of the draft once every case, version or list a rule refuses is left out (each
    refused with its source); the rules are run again until they pass."""
    for _ in range(1 + sum(len(items) for *_, items in draft.lists + draft.test_cases)):
        text = render(draft)
        problems = rule_problems(text, suffix)
        if not problems:
            return text
        draft = _without(draft, problems, refused)
    raise AssertionError("the data-file rules still refuse the recording")  # each round drops one


def _without(draft: Draft, problems: list[tuple[str, str]], refused: list[Refused]) -> Draft:
    """The draft without what each problem is at; a problem at no case, version or list is a bug."""
    dropped: dict[tuple[str, int, int | None], str] = {}
    for pointer, message in problems:
        found = AT.match(pointer)
        if found is None:
            raise AssertionError(f"a data-file problem at no entry: {pointer}: {message}")
        part, index, inner = found.group(1), int(found.group(2)), found.group(4)
        key = (part, index, None if inner is None else int(inner))
        dropped.setdefault(key, f"{pointer[found.end() :] or '/'}: {message}")
    lists = [
        (agent, project, _kept(items, "testSet", number, dropped, refused))
        for number, (agent, project, items) in enumerate(draft.lists)
        if not _whole(("testSet", number, None), items, dropped, refused)
    ]
    test_cases = [
        (uuid, kept)
        for number, (uuid, items) in enumerate(draft.test_cases)
        if not _whole(("gradient", number, None), items, dropped, refused)
        and (kept := _kept(items, "gradient", number, dropped, refused))
    ]
    return Draft(lists, test_cases)


def _whole(
    key: tuple[str, int, None], items: list[Item], dropped: dict[Any, str], refused: list[Refused]
) -> bool:
    """Whether a whole list or test case is refused (its ids): each of its answers' sources said."""
    if key not in dropped:
        return False
    for source in dict.fromkeys(source for _, source in items):
        refused.append(Refused(source, dropped[key]))
    return True


def _kept(
    items: list[Item], part: str, number: int, dropped: dict[Any, str], refused: list[Refused]
) -> list[Item]:
    kept = []
    for index, (value, source) in enumerate(items):
        why = dropped.get((part, number, index))
        if why is None:
            kept.append((value, source))
        else:
            refused.append(Refused(source, why))
    return kept
