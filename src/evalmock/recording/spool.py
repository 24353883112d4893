"""Where a recording keeps what it saw: the cases, versions and walk orders in a SQLite file on disk
that no path names (removed however the process ends), so that a recording of any number of cases
holds few of them in memory."""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from typing import Any

from evalmock.recording.answers import Source

# An answer's source is a row of its own, each case and version naming it by number: its URL once
# for a page, not once for each of its cases. A body is its JSON compressed (`_packed`).
_SCHEMA = """
CREATE TABLE sources (number INTEGER PRIMARY KEY, source TEXT);
CREATE TABLE cases (list INTEGER, id TEXT, added REAL, updated REAL, first INTEGER, body BLOB,
                    source INTEGER, PRIMARY KEY (list, id));
CREATE INDEX cases_order ON cases (list, added);
CREATE TABLE listed (list INTEGER, walk INTEGER, position INTEGER, id TEXT);
CREATE INDEX listed_order ON listed (list, walk, position);
CREATE TABLE versions (test_case INTEGER, number INTEGER, body BLOB, source INTEGER,
                       PRIMARY KEY (test_case, number));
"""


def _source(source: Source) -> str:
    return json.dumps([source.where, source.method, source.url])


def _packed(body: str) -> bytes:
    # zlib's quickest level: a case's 560 bytes of JSON take 340, for 14 µs
    return zlib.compress(body.encode("utf-8", "surrogatepass"), 1)


def _unpacked(body: bytes) -> Any:
    return json.loads(zlib.decompress(body).decode("utf-8", "surrogatepass"))


def source_of(text: str) -> Source:
    where, method, url = json.loads(text)
    return Source(where, method, url)


class Store:
    """The rows of one recording; safe to use from several threads (one at a time)."""

    def __init__(self, *, empty: bool = False) -> None:
        self.lock = threading.RLock()
        # SQLite's own temporary database: a file in the temporary folder (TMPDIR), unlinked as soon
        # as it is opened, so that no exit (an error, Ctrl-C, SIGTERM, SIGKILL) leaves it behind
        self._db = sqlite3.connect("", check_same_thread=False, isolation_level=None)
        self._last: tuple[Source, int] | None = None  # the source kept last, and its number
        # a recording is made again from its traffic, never recovered: no journal written twice
        self._db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
        self._db.execute("PRAGMA cache_size=-8192")  # 8 MiB of pages, whatever the recording
        if not empty:
            self._db.executescript(_SCHEMA)
            self._db.execute("BEGIN")

    # -- cases
    def case_times(self, list_key: int, case_id: str) -> tuple[float | None, int] | None:
        """(updatedAt as seconds, first seen) of a case kept, or None."""
        with self.lock:
            row = self._db.execute(
                "SELECT updated, first FROM cases WHERE list=? AND id=?", (list_key, case_id)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def keep_case(
        self,
        list_key: int,
        case_id: str,
        times: tuple[float | None, float | None, int],
        body: str,
        source: Source,
    ) -> None:
        added, updated, first = times
        with self.lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cases VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    list_key,
                    case_id,
                    added,
                    updated,
                    first,
                    _packed(body),
                    self._source_number(source),
                ),
            )

    def _source_number(self, source: Source) -> int:
        """The number of the source's row, written when it differs from the one kept last (the
        cases of one answer come one after another)."""
        if self._last is None or self._last[0] != source:
            row = self._db.execute("INSERT INTO sources (source) VALUES (?)", (_source(source),))
            assert row.lastrowid is not None
            self._last = (source, row.lastrowid)
        return self._last[1]

    def listed(self, list_key: int, walk: int, position: int, case_id: str) -> None:
        with self.lock:
            self._db.execute(
                "INSERT INTO listed VALUES (?, ?, ?, ?)", (list_key, walk, position, case_id)
            )

    def case_count(self, list_key: int) -> int:
        with self.lock:
            return int(
                self._db.execute("SELECT count(*) FROM cases WHERE list=?", (list_key,)).fetchone()[
                    0
                ]
            )

    def case_order(self, list_key: int) -> Iterator[tuple[str, float | None, int]]:
        """(id, addedAt as seconds, first seen) of each case of a list: newest addedAt first, the
        unreadable ones last."""
        with self.lock:
            rows = self._db.execute(
                "SELECT id, added, first FROM cases WHERE list=? "
                "ORDER BY added IS NULL, added DESC, first",
                (list_key,),
            )
            while batch := rows.fetchmany(1024):
                yield from batch

    def walk_positions(self, list_key: int, ids: list[str]) -> Iterator[tuple[int, str]]:
        """(walk, id) of every listing of these ids, each walk in its order."""
        with self.lock:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id TEXT PRIMARY KEY)")
            self._db.execute("DELETE FROM wanted")
            self._db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((i,) for i in ids))
            rows = self._db.execute(
                "SELECT walk, listed.id FROM listed JOIN wanted ON listed.id = wanted.id "
                "WHERE list=? ORDER BY walk, position",
                (list_key,),
            ).fetchall()
        yield from rows

    def case(self, list_key: int, case_id: str) -> tuple[dict[str, Any], Source]:
        with self.lock:
            body, source = self._db.execute(
                "SELECT body, sources.source FROM cases JOIN sources ON cases.source = number "
                "WHERE list=? AND id=?",
                (list_key, case_id),
            ).fetchone()
        return _unpacked(body), source_of(source)

    # -- versions
    def keep_version(self, test_case: int, number: int, body: str, source: Source) -> None:
        with self.lock:
            self._db.execute(
                "INSERT OR REPLACE INTO versions VALUES (?, ?, ?, ?)",
                (test_case, number, _packed(body), self._source_number(source)),
            )

    def versions(self, test_case: int) -> Iterator[tuple[dict[str, Any], Source]]:
        """A test case's versions, oldest first."""
        with self.lock:
            rows = self._db.execute(
                "SELECT body, sources.source FROM versions JOIN sources ON versions.source = "
                "sources.number WHERE test_case=? ORDER BY versions.number",
                (test_case,),
            )
            while batch := rows.fetchmany(256):
                for body, source in batch:
                    yield _unpacked(body), source_of(source)

    # -- the whole
    def __deepcopy__(self, memo: dict[int, Any]) -> Store:
        return self  # a copy of a recording shares its store until given a snapshot of it

    def snapshot(self) -> Store:
        """A copy of every row as it stands now, in a file of its own: read while this one goes on
        being written to."""
        copy = Store(empty=True)
        with self.lock:
            self._db.execute("COMMIT")
            try:
                self._db.backup(copy._db)
            finally:
                self._db.execute("BEGIN")
        copy._db.execute("BEGIN")
        return copy

    def close(self) -> None:
        with self.lock:
            self._db.close()
