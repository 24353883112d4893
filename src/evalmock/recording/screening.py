"""What may go into a data file: nothing that holds a secret of the traffic, and nothing the data
file's own rules refuse, each left out with the answer it came from and why."""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import re
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import Refusals, Refused
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


# A run of base64 (or base64url) long enough to hold a secret.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
MIN_TRANSFORMED = 8  # shorter secrets are looked for only as they are written (the redactor's)
# Strings found to hold no secret, remembered until the secrets known change: a data file's keys
# and most of its values come again in every case. Short ones only, and so many at most.
_CLEAN_LENGTH, _CLEAN_COUNT = 256, 4096


def _plain(text: str) -> str:
    """Text as a secret in it is compared: compatibility forms folded (a full-width letter is its
    letter), letter case folded, format characters removed (zero-width joiners and spaces, soft
    hyphens, marks of direction: Unicode's category Cf, which changes no text a reader sees)."""
    if text.isascii():  # no compatibility form, no format character: only its case to fold
        return text.lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")


def _readings(text: str) -> Iterator[str]:
    """The texts a secret may hide in: the text, %-decoded (twice), and each run of base64 in it
    decoded; each as `_plain`."""
    seen = {text}
    for _ in range(2):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
        seen.add(text)
    for one in list(seen):
        for run in _BASE64_RUN.findall(one):
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                with contextlib.suppress(binascii.Error, ValueError):
                    seen.add(decode(run + "=" * (-len(run) % 4)).decode("utf-8", "ignore"))
    for one in seen:
        yield _plain(one)


class Secrets:
    """Whether a value holds a secret of the traffic in any form: as the redactor finds it (a
    secret-named field; a secret written as is, %-, HTML- or JSON-escaped) or transformed (in
    another letter case, %-encoded, base64-encoded, with a zero-width character inside)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._known = -1
        self._plain: list[str] = []
        self._clean: set[str] = set()

    def _plains(self) -> list[str]:
        echoed = self.redactor.echoed()
        if len(echoed) != self._known:  # learned more since
            self._known = len(echoed)
            self._plain = sorted(
                {p for secret in echoed if len(p := _plain(secret)) >= MIN_TRANSFORMED}
            )
            self._clean.clear()
        return self._plain

    def held(self, value: Any) -> bool:
        if self.redactor.json(value) != value:
            return True
        plains = self._plains()
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if item in self._clean:
                    continue
                # a string the redactor learns a secret from is one it changes: no string found
                # clean before it in this value holds that secret unseen
                if self.redactor.text(item) != item:
                    return True
                if plains and any(p in reading for reading in _readings(item) for p in plains):
                    return True
                if len(item) <= _CLEAN_LENGTH:
                    if len(self._clean) >= _CLEAN_COUNT:
                        self._clean.clear()
                    self._clean.add(item)
            elif isinstance(item, dict):
                stack += [*item.keys(), *item.values()]
            elif isinstance(item, list):
                stack += item
        return False


def holds_a_secret(value: Any, redactor: Redactor) -> bool:
    """Whether `value` holds a secret of the traffic in any form (see `Secrets`)."""
    return Secrets(redactor).held(value)


def without_secrets(draft: Draft, secrets: Secrets, refused: Refusals) -> Draft:
    """The draft without the cases and versions that hold a secret, and without the lists and test
    cases whose ids do: refused, never redacted (a placeholder in place of a value would serve
    something the service never said), named by where they stand, never by the secret."""

    def keep(items: list[Item], ids: list[str]) -> list[Item]:
        if secrets.held(ids):
            for _, source in items:
                refused.append(Refused(source, "its list's ids hold a secret of the traffic"))
            return []
        kept = []
        for value, source in items:
            if secrets.held(value):
                refused.append(Refused(source, "it holds a secret of the traffic; left out"))
            else:
                kept.append((value, source))
        return kept

    return Draft(
        [
            (agent, project, kept)
            for agent, project, items in draft.lists
            if (kept := keep(items, [agent, project])) or not secrets.held([agent, project])
        ],
        [(uuid, kept) for uuid, items in draft.test_cases if (kept := keep(items, [uuid]))],
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
    draft: Draft, render: Callable[[Draft], str], suffix: str, refused: Refusals
) -> str:
    """The text of the draft once every case, version or list a rule refuses is left out (each
    refused with its source); the rules are run again until they pass."""
    for _ in range(2 + sum(len(items) for *_, items in draft.lists + draft.test_cases)):
        text = render(draft)
        problems = rule_problems(text, suffix)
        if not problems:
            return text
        draft = _without(draft, problems, refused)
    # each round drops one item at least: never reached, but never a loop without end either
    for *_, items in draft.lists + draft.test_cases:
        for _, source in items:
            refused.append(Refused(source, "the data-file rules refuse it; left out"))
    return render(Draft([], []))


def _without(draft: Draft, problems: list[tuple[str, str]], refused: Refusals) -> Draft:
    """The draft without what each problem is at; a problem at no case, version or list (which
    the recording's own screening should have caught) leaves out the whole draft."""
    dropped: dict[tuple[str, int, int | None], str] = {}
    for pointer, message in problems:
        found = AT.match(pointer)
        if found is None:
            for *_, items in draft.lists + draft.test_cases:
                for _, source in items:
                    refused.append(Refused(source, f"{pointer or '/'}: {message}"))
            return Draft([], [])
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
    key: tuple[str, int, None], items: list[Item], dropped: dict[Any, str], refused: Refusals
) -> bool:
    """Whether a whole list or test case is refused (its ids): each of its answers' sources said."""
    if key not in dropped:
        return False
    for source in dict.fromkeys(source for _, source in items):
        refused.append(Refused(source, dropped[key]))
    return True


def _kept(
    items: list[Item], part: str, number: int, dropped: dict[Any, str], refused: Refusals
) -> list[Item]:
    kept = []
    for index, (value, source) in enumerate(items):
        why = dropped.get((part, number, index))
        if why is None:
            kept.append((value, source))
        else:
            refused.append(Refused(source, why))
    return kept
