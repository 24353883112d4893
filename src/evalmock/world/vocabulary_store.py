"""A seed's word pools kept on disk, so that a server whose pools are kept starts without importing Faker.

The folder is EVALMOCK_CACHE_DIR, else $XDG_CACHE_HOME/evalmock, else ~/.cache/evalmock; EVALMOCK_CACHE_DIR=off
keeps nothing. A file is named after all that decides the pools: the seed, Faker's version and the code that
draws them (vocabulary.py, hashing.py), so a pool drawn by another Faker or by other code is never read. A file
that cannot be read, written or understood is passed over and the pools are drawn again: the world is the same
either way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from evalmock.world import hashing, vocabulary
from evalmock.world.vocabulary import Person, Vocabulary, build_vocabulary

CACHE_ENV = "EVALMOCK_CACHE_DIR"
OFF = "off"


def cache_dir() -> Path | None:
    """Where the pools are kept, or None when keeping is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured in ("", OFF) else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "evalmock"


def pools_file(directory: Path, seed: int) -> Path:
    decided_by = hashlib.sha256()
    decided_by.update(importlib.metadata.version("faker").encode())
    for module in (vocabulary, hashing):
        decided_by.update(Path(module.__file__ or "").read_bytes())
    return directory / f"vocabulary-{seed}-{decided_by.hexdigest()[:16]}.json"


def kept_vocabulary(seed: int) -> Vocabulary:
    """The pools of `seed`: read from the folder when kept there, else drawn with Faker (and kept)."""
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


def _read(path: Path) -> Vocabulary | None:
    try:
        return _from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _from_json(data: Any) -> Vocabulary | None:
    names = {field.name for field in dataclasses.fields(Vocabulary)}
    if not isinstance(data, dict) or set(data) != names:
        return None
    pools = {name: tuple(values) for name, values in data.items() if name != "people"}
    return Vocabulary(people=tuple(Person(**person) for person in data["people"]), **pools)


def _write(path: Path, pools: Vocabulary) -> None:
    """Write the pools beside their final name, then rename: a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".vocabulary-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(dataclasses.asdict(pools), file, ensure_ascii=False)
        os.replace(temporary, path)
    except OSError:
        return  # a read-only home or a full disk: the next start draws the pools again
