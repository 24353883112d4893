"""Reading data files (`evalmock serve --data`, JSON or YAML) or a data file's content given as
JSON: all of it checked, or all refused with every problem.

A file is read (JSON when it ends in `.json`, else YAML), checked to hold only what JSON can (so
that every value can be served), checked against the frame of `evalmock.world.data_schema`, and then
by the rules of `evalmock.world.data_rules`. Problems come out as `FILE:LINE: /json/pointer:
message`, lines found only when there are problems (composing a large file is slow); those of a
document given in memory (`load_document`, a session's `data`) as `/json/pointer: message`.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml
from jsonschema.exceptions import ValidationError

from evalmock.contract.lint import pointer
from evalmock.contract.problems import Problem, compose, line_of, unreadable
from evalmock.contract.spelling import unknown_key
from evalmock.exits import UsageError
from evalmock.input_files import read_bounded
from evalmock.world.data_rules import RULES, ReadCase, ReadData, ReadTestCase
from evalmock.world.data_schema import PATH_SEGMENT, frame_validator
from evalmock.world.short_form import fill_short_forms
from evalmock.world.user_data import UserData, UserList, UserTestCase, list_generation
from evalmock.world.wording import described, shown
from evalmock.world.world import World

# orjson, which serves every answer, refuses deeper nesting and integers beyond 64 bits.
MAX_DEPTH = 200
MAX_VALUES = 5_000_000  # about 15 times the whole default world's export
MAX_DATA_BYTES = 512 * 2**20  # a data file is read whole
_INT_RANGE = (-(1 << 63), (1 << 64) - 1)
# What YAML's own tags make, in YAML's words.
_YAML_ONLY = {
    bytes: "binary data (!!binary)",
    set: "a set (!!set)",
    tuple: "a pair list (!!pairs)",
    datetime.date: "a date (!!timestamp)",
    datetime.datetime: "a date-time (!!timestamp)",
}
# What a data file holds at the top, in its own language.
_TOP = {
    "JSON": 'an object {"testSet": [...], "gradient": [...]}',
    "YAML": "a mapping with testSet: and gradient: lists",
}


class DataFileError(UsageError, ValueError):
    """Data files that break a rule; `problems` holds every problem, each at its file, line and JSON
    pointer."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


class _DataLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML, read as JSON would be: an unquoted date-time stays a string, as the APIs send
    it."""


_DataLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class _File:
    path: Path | None  # None: a document given in memory, read as JSON
    raw: bytes
    text: str
    document: Any
    problems: list[Problem]

    @property
    def is_json(self) -> bool:
        return self.path is None or _is_json(self.path)


def _is_json(path: Path) -> bool:
    return path.suffix.lower() == ".json"


def load_data(paths: Sequence[str | Path], world: World, *, short_form: bool = True) -> UserData:
    """The data of every file, checked against the rules and against `world` (which it will be added
    to); without `short_form`, a case must give every field (a recording: nothing is made up).

    DataFileError lists every problem of every file; nothing of a file with a problem is ever used.
    """
    return _checked([_read(Path(path)) for path in paths], world, short_form=short_form)


def load_document(document: Any, world: World, *, max_values: int | None = None) -> UserData:
    """The data of a data file's content already parsed as JSON (a session's `data`), checked by
    the same rules as a file and against `world` (which it will be added to).

    DataFileError lists every problem, each at its JSON pointer (there is no file, so no line).
    Hostile input is bounded as a file's is: at most `max_values` values (None: `MAX_VALUES`),
    `MAX_DEPTH` deep, and nothing JSON cannot hold; a document of any shape is refused, never a
    crash. Its size in bytes is the caller's to bound, before parsing it.
    """
    found = _unservable(document, max_values, from_text=False)
    problems, raw = [Problem(None, where, message) for where, message in found], b""
    if not problems:
        try:  # what identifies the content, key order included, as a file's bytes do
            raw = orjson.dumps(document)
        except orjson.JSONEncodeError as exc:
            problems.append(Problem(None, "", f"not a JSON value: {exc}"))
    return _checked([_File(None, raw, "", document, problems)], world)


def _checked(files: list[_File], world: World, *, short_form: bool = True) -> UserData:
    """The data of read `files`, or DataFileError with every problem of every one."""
    problems = [problem for file in files for problem in file.problems]
    read = ReadData()
    for file in files:
        if not file.problems:
            frame = list(frame_validator().iter_errors(file.document))
            problems += [problem for error in frame for problem in _frame_problems(file, error)]
            _collect(
                file,
                read,
                {tuple(error.absolute_path)[:2] for error in frame if _breaks_entry(error)},
            )
    if short_form:
        fill_short_forms(read, world)
    problems += [problem for rule in RULES for problem in rule(read, world)]
    if problems:
        # Two keywords may say one thing (a UUID's format and pattern; OpenAPI's nullable and type):
        # say it once.
        raise DataFileError(_located(list(dict.fromkeys(problems)), files))
    return _user_data(files, read)


def _read(path: Path) -> _File:
    try:
        raw = read_bounded(path, MAX_DATA_BYTES)
    except OSError as exc:
        return _File(
            path, b"", "", None, [Problem(path, "", f"cannot read: {exc.strerror or exc}")]
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return _File(
            path,
            raw,
            "",
            None,
            [Problem(path, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}")],
        )
    language = "JSON" if _is_json(path) else "YAML"
    if not text.strip():
        return _File(path, raw, text, None, [_empty(path, language)])
    try:
        if language == "JSON":
            document = json.loads(text, parse_constant=_no_constant)
        else:
            document = yaml.load(text, Loader=_DataLoader)
    except json.JSONDecodeError as exc:
        return _File(
            path,
            raw,
            text,
            None,
            [Problem(path, "", f"not valid JSON: {exc.msg}", exc.lineno, exc.colno)],
        )
    except yaml.YAMLError as exc:
        return _File(path, raw, text, None, [unreadable(path, exc)])
    except (ValueError, RecursionError) as exc:
        message = (
            f"nested more than {MAX_DEPTH} deep" if isinstance(exc, RecursionError) else str(exc)
        )
        return _File(path, raw, text, None, [Problem(path, "", f"not valid {language}: {message}")])
    if document is None and language == "YAML":  # comments only
        return _File(path, raw, text, None, [_empty(path, language)])
    return _File(
        path,
        raw,
        text,
        document,
        [Problem(path, where, message) for where, message in _unservable(document)],
    )


def _empty(path: Path, language: str) -> Problem:
    return Problem(
        path,
        "",
        f"the file is empty; write {_TOP[language]} (either may be left out), as "
        "`evalmock fixtures export -o FILE` writes",
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unservable(
    document: Any, max_values: int | None = None, *, from_text: bool = True
) -> Iterator[tuple[str, str]]:
    """What in a parsed file is not plain JSON (YAML can say more), or is beyond what the server can
    send (`from_text`: parsed from a file, whose aliases may multiply it)."""
    max_values = MAX_VALUES if max_values is None else max_values
    pending: list[tuple[str, Any, int]] = [("", document, 0)]
    for count in itertools.count(1):
        if not pending:
            return
        if count > max_values:
            why = " (YAML aliases repeat all they name)" if from_text else ""
            yield "", f"holds more than {max_values:,} values{why}"
            return
        where, value, depth = pending.pop()
        if depth > MAX_DEPTH:
            yield where, f"nested more than {MAX_DEPTH} deep"
        elif isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    yield where, f"keys are text, got {shown(key)}; quote it"
            children = [
                (f"{where}{pointer(key)}", item)
                for key, item in value.items()
                if isinstance(key, str)
            ]
            pending += [(child, item, depth + 1) for child, item in reversed(children)]
        elif isinstance(value, list):
            pending += [
                (f"{where}/{index}", value[index], depth + 1)
                for index in reversed(range(len(value)))
            ]
        elif (problem := _unservable_scalar(value)) is not None:
            yield where, problem


def unservable(value: Any) -> str | None:
    """What first in a JSON value a data file cannot hold, as `POINTER: problem`, or None."""
    found = next(_unservable(value, from_text=False), None)
    return None if found is None else f"{found[0] or '/'}: {found[1]}"


def _unservable_scalar(value: Any) -> str | None:
    """What makes one scalar unservable, if anything."""
    if isinstance(value, str):
        surrogate = "the text holds an unpaired surrogate, which is not Unicode text"
        return None if _is_unicode(value) else surrogate
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        within = _INT_RANGE[0] <= value <= _INT_RANGE[1]
        return None if within else f"the integer {shown(value)} is beyond 64 bits"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a JSON number"
    return (
        f"{_YAML_ONLY.get(type(value), 'a value of a YAML tag')} is not a JSON value; write it as "
        "text"
    )


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _pointer(error: ValidationError) -> str:
    return pointer(*error.absolute_path) if error.absolute_path else ""


def _frame_problems(file: _File, error: ValidationError) -> Iterator[Problem]:
    """A frame error as problems: one for each unknown key (at the key), else one at the value."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in known:
                yield Problem(
                    file.path,
                    pointer(*error.absolute_path, key),
                    unknown_key(key, known, quote='"'),
                )
    elif not error.absolute_path and error.validator == "type":
        language = "JSON" if file.is_json else "YAML"
        yield Problem(
            file.path,
            "",
            f"expected {_TOP[language]} at the top (either may be left out), "
            f"got {shown(file.document)}",
        )
    elif error.validator == "pattern" and error.validator_value == PATH_SEGMENT:
        yield Problem(
            file.path,
            _pointer(error),
            f"expected text that fits in a path segment (no slash, no control "
            f"characters), got {shown(error.instance)}",
        )
    else:
        yield Problem(file.path, _pointer(error), described(error))


def _breaks_entry(error: ValidationError) -> bool:
    """Whether a frame error leaves its entry (`/testSet/0`) unusable: its ids, or its cases or
    versions, are wrong."""
    path = list(error.absolute_path)
    return (
        len(path) in (2, 3) and error.validator != "additionalProperties" and path[2:] != ["note"]
    )


def _collect(file: _File, read: ReadData, broken: set[tuple[Any, ...]]) -> None:
    """The cases and test cases of the file's usable entries, with where they are."""
    document = file.document if isinstance(file.document, dict) else {}
    for index, entry in enumerate(_list(document.get("testSet"))):
        where = f"/testSet/{index}"
        if ("testSet", index) in broken or not isinstance(entry, dict):
            continue
        read.list_keys.append((entry["agentId"], entry["projectId"].lower()))
        for number, case in enumerate(entry["cases"]):
            read.cases.append(
                ReadCase(
                    file.path,
                    f"{where}/cases/{number}",
                    entry["agentId"],
                    entry["projectId"].lower(),
                    case,
                )
            )
    for index, entry in enumerate(_list(document.get("gradient"))):
        if ("gradient", index) in broken or not isinstance(entry, dict):
            continue
        uuid, versions = entry["test_case_uuid"], entry["versions"]
        read.test_cases.append(ReadTestCase(file.path, f"/gradient/{index}", uuid, versions))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _located(problems: list[Problem], files: list[_File]) -> list[Problem]:
    """Each problem with its line, in file order and then line order."""
    order = {file.path: number for number, file in enumerate(files)}
    with_problems = {problem.path for problem in problems}
    trees = {
        file.path: compose(file.text, is_json=file.is_json)
        for file in files
        if file.path is not None and file.document is not None and file.path in with_problems
    }
    located = [
        problem
        if problem.line or problem.path not in trees
        else dataclasses.replace(problem, line=line_of(trees[problem.path], problem.pointer))
        for problem in problems
    ]
    return sorted(located, key=lambda problem: (order.get(problem.path, 0), problem.line or 0))


def _served_version(version: dict[str, Any], uuid: str) -> dict[str, Any]:
    """A version as served: it carries the uuid it is served under unless it states its own (a UI
    keys on it)."""
    return version if "test_case_uuid" in version else {"test_case_uuid": uuid, **version}


def _user_data(files: list[_File], read: ReadData) -> UserData:
    lists: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in read.list_keys}
    for case in read.cases:
        lists.setdefault((case.agent_id, case.project_id), []).append(case.case)
    digest = hashlib.blake2b(digest_size=8)
    for file in files:
        digest.update(len(file.raw).to_bytes(8, "big") + file.raw)
    return UserData(
        files=tuple(str(file.path) for file in files if file.path is not None),
        lists=tuple(
            UserList(agent_id, project_id, tuple(cases), list_generation(cases))
            for (agent_id, project_id), cases in lists.items()
        ),
        test_cases=tuple(
            UserTestCase(
                test.uuid.lower(),
                tuple(_served_version(version, test.uuid) for version in test.versions),
            )
            for test in read.test_cases
        ),
        generation=int.from_bytes(digest.digest(), "big"),
    )
