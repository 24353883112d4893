"""A recording written as a data file (YAML, or JSON for a `.json` path, as `serve --data` reads
them): secrets and what the rules refuse left out, people anonymized on request; written a part at a
time from the recording's store (a part of CHUNK cases or versions checked by the rules on its own)
beside the file, then moved into place."""

from __future__ import annotations

import io
import itertools
import json
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import yaml

from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import Recording, Refusals, Refused
from evalmock.recording.lists import RecordedList
from evalmock.recording.screening import (
    Draft,
    Item,
    Secrets,
    rule_problems,
    within_the_rules,
    without_secrets,
)
from evalmock.recording.test_cases import RecordedTestCase
from evalmock.whole_file import staged

CHUNK = 200  # cases or versions checked by the data-file rules at once
_INDENT = "\n" + " " * 8  # a JSON data file's item, in its list in its entry in its section


@dataclass(frozen=True)
class WriteOptions:
    anonymize_seed: int | None = None  # None: people's ids, e-mails and names as recorded


@dataclass
class Written:
    """What one write left out (on top of what the recording refused), and how much it wrote."""

    refused: Refusals = field(default_factory=Refusals)
    lists: dict[tuple[str, str], int] = field(default_factory=dict)  # cases written per list
    versions: dict[str, list[int]] = field(default_factory=dict)  # versions written per uuid
    hidden: set[Any] = field(default_factory=set)  # lists and test cases whose ids hold a secret


class DataFile:
    """A data file written a part at a time: its sections (`testSet`, `gradient`), each of entries
    (a list, a test case) of items (cases, versions), as `fixtures export` lays one out."""

    def __init__(self, out: IO[str], is_json: bool, dumped: Dumped | None = None) -> None:
        self.out, self.is_json = out, is_json
        self.dumped = dumped if dumped is not None else Dumped()
        self.sections = 0
        self.entries = 0
        self.items = 0
        self.name = ""
        self.inner = ""

    def section(self, name: str) -> None:
        if self.is_json:
            self.out.write(("{" if not self.sections else ",") + f'\n  "{name}": [')
        self.name = name  # YAML's is written with its first entry: a section of none is `[]`
        self.sections, self.entries = self.sections + 1, 0

    def entry(self, header: dict[str, str], inner: str) -> None:
        self.inner, self.items = inner, 0
        if self.is_json:
            fields = "".join(
                f"\n      {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},"
                for k, v in header.items()
            )
            self.out.write(("," if self.entries else "") + f'\n    {{{fields}\n      "{inner}": [')
        else:
            lines = _yaml(header).splitlines(keepends=True)
            self.out.write(("" if self.entries else f"{self.name}:\n") + "- " + "  ".join(lines))
        self.entries += 1

    def item(self, value: dict[str, Any]) -> None:
        if self.is_json:
            # orjson's lines hold no line break of their own (a string's is escaped): each indented
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode().replace("\n", _INDENT)
            self.out.write(("," if self.items else "") + "\n" + " " * 8 + text)
        else:
            if not self.items:
                self.out.write(f"  {self.inner}:\n")
            self.out.write(self.dumped.item(value))
        self.items += 1

    def entry_end(self) -> None:
        if self.is_json:
            self.out.write(("\n      " if self.items else "") + "]\n    }")
        elif not self.items:
            self.out.write(f"  {self.inner}: []\n")

    def section_end(self) -> None:
        if self.is_json:
            self.out.write(("\n  " if self.entries else "") + "]")
        elif not self.entries:
            self.out.write(f"{self.name}: []\n")

    def end(self) -> None:
        if self.is_json:
            self.out.write("\n}\n" if self.sections else "{}\n")
        elif not self.sections:
            self.out.write("{}\n")


# libyaml's emitter where it is built in: Python's took two thirds of a recording's write
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml(value: Any) -> str:
    return yaml.dump(
        value,
        Dumper=_DUMPER,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,  # no line folded (the most libyaml takes)
        default_flow_style=False,
    )


class Dumped:
    """Each item's YAML as the rules' check rendered it, kept for the write of the same item: the
    Python half of PyYAML's dump (its representer) took a third of a YAML import's time, twice
    over. Held by the item itself, not its id, which a new item may take once the old is gone."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[dict[str, Any], str]] = {}

    def item(self, value: dict[str, Any]) -> str:
        held = self._texts.get(id(value))
        if held is not None and held[0] is value:
            return held[1]
        text = textwrap.indent(_yaml([value]), "  ")
        self._texts[id(value)] = (value, text)
        return text

    def clear(self) -> None:
        self._texts.clear()


def render(draft: Draft, is_json: bool, dumped: Dumped | None = None) -> str:
    """A whole data file of the draft (each item's YAML kept in `dumped`, when given)."""
    out = io.StringIO()
    file = DataFile(out, is_json, dumped)
    parts = (
        ("testSet", "cases", [({"agentId": a, "projectId": p}, i) for a, p, i in draft.lists]),
        ("gradient", "versions", [({"test_case_uuid": u}, i) for u, i in draft.test_cases]),
    )
    for name, inner, entries in parts:
        if entries:
            file.section(name)
            for header, items in entries:
                file.entry(header, inner)
                for value, _ in items:
                    file.item(value)
                file.entry_end()
            file.section_end()
    file.end()
    return out.getvalue()


class _People:
    """The stand-ins of `--anonymize`: every person of the recording's items (but those holding a
    secret) found first, so that each part of the file replaces them alike."""

    def __init__(self, recording: Recording, redactor: Redactor, seed: int) -> None:
        # imported here: only a recording asked to anonymize pays for Faker
        from evalmock.world.anonymize import people, replacements

        found, secrets = set(), Secrets(redactor)
        for draft in _parts(recording):
            found |= people(without_secrets(draft, secrets, Refusals()).data())
        self.table = replacements(found, seed)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        from evalmock.world.anonymize import replaced

        return replaced(data, self.table)


def _chunks(items: Iterable[Item]) -> Iterator[list[Item]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, CHUNK)):
        yield chunk


def _parts(recording: Recording) -> Iterator[Draft]:
    """The recording as drafts of at most CHUNK items each, in the file's order."""
    for recorded in recording.lists.values():
        seen = ((s.case, s.source) for s in recorded.ordered())
        for chunk in _chunks(seen):
            yield Draft([(recorded.agent_id, recorded.project_id, chunk)], [])
    for recorded in recording.test_cases.values():
        for chunk in _chunks(recorded.ordered()):
            yield Draft([], [(recorded.uuid, chunk)])


def write_recording(
    recording: Recording, path: str | Path, redactor: Redactor, options: WriteOptions
) -> Written:
    """Write what the recording saw to `path`; every case or version left out is in `refused`."""
    path = Path(path)
    writer = _Writer(recording, redactor, options, path.suffix.lower() or ".yaml")
    with staged(path) as out:
        file = DataFile(out, writer.is_json, writer.dumped)
        if recording.lists:
            file.section("testSet")
            for recorded in recording.lists.values():
                writer.a_list(recorded, file)
            file.section_end()
        if recording.test_cases:
            file.section("gradient")
            for test_case in recording.test_cases.values():
                writer.a_test_case(test_case, file)
            file.section_end()
        file.end()
    return writer.written


class _Writer:
    """One write of a recording: each list and test case checked a part at a time, then written."""

    def __init__(
        self, recording: Recording, redactor: Redactor, options: WriteOptions, suffix: str
    ) -> None:
        self.redactor, self.suffix, self.is_json = redactor, suffix, suffix == ".json"
        self.written = Written()
        self.dumped = Dumped()
        self.secrets = Secrets(redactor)
        seed = options.anonymize_seed
        self.people = None if seed is None else _People(recording, redactor, seed)

    def checked(self, draft: Draft) -> Draft:
        """The draft as written: without secrets, its people replaced, what the rules refuse left
        out."""
        kept = without_secrets(draft, self.secrets, self.written.refused)
        result = [kept]

        def text_of(draft: Draft) -> str:
            if self.people is not None:
                draft = _anonymized(draft, self.people)
            result[0] = draft
            return render(draft, self.is_json, self.dumped)

        # the items of the last render are those written: their YAML is dumped once
        self.dumped.clear()
        within_the_rules(kept, text_of, self.suffix, self.written.refused)
        return result[0]

    def a_list(self, recorded: RecordedList, file: DataFile) -> None:
        key = (recorded.agent_id, recorded.project_id)
        if self.secrets.held(list(key)):
            self.written.hidden.add(key)
            why = "its list's ids hold a secret of the traffic"
            _refuse_all(recorded.ordered(), self.written.refused, why)
            return
        problems = rule_problems(render(Draft([(*key, [])], []), self.is_json), self.suffix)
        if problems:
            why = "the list: " + "; ".join(f"{at}: {message}" for at, message in problems)
            _refuse_all(recorded.ordered(), self.written.refused, why)
            return
        file.entry({"agentId": key[0], "projectId": key[1]}, "cases")
        count = 0
        for chunk in _chunks((s.case, s.source) for s in recorded.ordered()):
            for _, _, items in self.checked(Draft([(*key, chunk)], [])).lists:
                for value, _ in items:
                    file.item(value)
                    count += 1
        file.entry_end()
        self.written.lists[key] = count

    def a_test_case(self, recorded: RecordedTestCase, file: DataFile) -> None:
        numbers: list[int] = []
        if self.secrets.held(recorded.uuid):
            self.written.hidden.add(recorded.uuid)
        for chunk in _chunks(recorded.ordered()):
            for _, items in self.checked(Draft([], [(recorded.uuid, chunk)])).test_cases:
                for value, _ in items:
                    if not numbers:
                        file.entry({"test_case_uuid": recorded.uuid}, "versions")
                    file.item(value)
                    numbers.append(value["version"])
        if numbers:
            file.entry_end()
            self.written.versions[recorded.uuid] = numbers


def _anonymized(draft: Draft, people: _People) -> Draft:
    """The draft with its people replaced, each item beside the source it came from."""
    data = people(draft.data())
    lists = [
        (agent, project, list(zip(entry["cases"], (s for _, s in items), strict=True)))
        for (agent, project, items), entry in zip(draft.lists, data.get("testSet", []), strict=True)
    ]
    test_cases = [
        (uuid, list(zip(entry["versions"], (s for _, s in items), strict=True)))
        for (uuid, items), entry in zip(draft.test_cases, data.get("gradient", []), strict=True)
    ]
    return Draft(lists, test_cases)


def _refuse_all(seen: Iterable[Any], refused: Refusals, why: str) -> None:
    """Each answer of a list refused whole, once (its cases are read in the list's order, so one
    answer's cases may come apart: said again then)."""
    last = None
    for item in seen:
        if item.source != last:
            refused.append(Refused(item.source, why))
            last = item.source
