"""What a server's start keeps on disk for the next one: a seed's word pools, and that the fixtures
passed every rule.

With both kept, a start imports neither Faker nor openapi-schema-validator (and its
pydantic-settings): 0.2 s and 14 MiB less. The folder is EVALMOCK_CACHE_DIR, else
$XDG_CACHE_HOME/evalmock, else ~/.cache/evalmock; EVALMOCK_CACHE_DIR=off keeps nothing. A file is
named after all that decides its content, so it is never read for other inputs: the pools after the
seed, Faker's version and the code that draws them; the fixtures' verdict after the fixture files,
the document, the seed (it places them), evalmock's world and contract code, the validators'
versions and Python's. Only a pass is kept: fixtures that break a rule are checked, and refused, at
every start. A file that cannot be read, written or understood is passed over and the work is done
again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

from evalmock import contract, world
from evalmock.contract.documents import TEST_SET
from evalmock.paths import cache_dir
from evalmock.whole_file import write_whole
from evalmock.world import hashing, vocabulary
from evalmock.world.vocabulary import Person, Vocabulary, build_vocabulary


def pools_file(directory: Path, seed: int) -> Path:
    decided_by = hashlib.sha256()
    decided_by.update(importlib.metadata.version("faker").encode())
    for module in (vocabulary, hashing):
        decided_by.update(Path(module.__file__ or "").read_bytes())
    return directory / f"vocabulary-{seed}-{decided_by.hexdigest()[:16]}.json"


def kept_vocabulary(seed: int) -> Vocabulary:
    """The pools of `seed`: read from the folder when kept there, else drawn with Faker (and
    kept)."""
    directory = cache_dir()
    if directory is None:
        return build_vocabulary(seed)
    path = pools_file(directory, seed)
    kept = _read(path)
    if kept is not None:
        return kept
    drawn = build_vocabulary(seed)
    _write(path, drawn)
    return drawn


def fixtures_passed_before(directory: Path, seed: int) -> bool:
    """Whether these very fixtures passed every rule of this very code at an earlier start."""
    folder = cache_dir()
    try:
        return folder is not None and verdict_file(folder, directory, seed).is_file()
    except OSError:  # a fixture or the document cannot be read: the check says why
        return False


def remember_fixtures_passed(directory: Path, seed: int) -> None:
    """Note that the fixtures in `directory` passed every rule (call only once they have)."""
    folder = cache_dir()
    try:
        if folder is not None:
            _write_text(verdict_file(folder, directory, seed), "")
    except OSError:
        return


# What decides whether a fixture passes besides evalmock's own code: the validators and the format
# checks.
VALIDATING_DISTRIBUTIONS = (
    "openapi-schema-validator",
    "jsonschema",
    "rfc3339-validator",
    "referencing",
)


def verdict_file(folder: Path, directory: Path, seed: int) -> Path:
    decided_by = hashlib.sha256(f"{sys.version}\0{seed}\0".encode())
    for name in VALIDATING_DISTRIBUTIONS:
        decided_by.update(f"{name} {_version(name)}\0".encode())
    folders = [Path(package.__file__ or "").parent for package in (world, contract)]
    sources = [path for folder in folders for path in sorted(folder.glob("*.py"))]
    for path in [*sorted(directory.glob("*.json")), TEST_SET.path, *sources]:
        decided_by.update(f"{path.name}\0".encode() + path.read_bytes() + b"\0")
    return folder / f"fixtures-passed-{decided_by.hexdigest()[:24]}"


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _read(path: Path) -> Vocabulary | None:
    try:
        return _from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _from_json(data: Any) -> Vocabulary | None:
    """The pools as `_write` wrote them, or None for anything else (another shape, another type
    anywhere)."""
    names = {field.name for field in dataclasses.fields(Vocabulary)}
    if not isinstance(data, dict) or set(data) != names:
        return None
    pools = {name: values for name, values in data.items() if name != "people"}
    people = data["people"]
    if not all(_strings(values) for values in pools.values()) or not isinstance(people, list):
        return None
    if not all(isinstance(person, dict) and _strings(list(person.values())) for person in people):
        return None
    return Vocabulary(
        people=tuple(Person(**person) for person in people),
        **{name: tuple(values) for name, values in pools.items()},
    )


def _strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)


def _write(path: Path, pools: Vocabulary) -> None:
    _write_text(path, json.dumps(dataclasses.asdict(pools), ensure_ascii=False))


def _write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, text)
    except OSError:
        return  # a read-only home or a full disk: the next start does the work again
