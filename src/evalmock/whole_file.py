"""Files written whole: beside their final name, then renamed into place, so that a reader never sees half of one.

A targets file is rewritten by a running server while a harness may be reading it; an export may go over a data
file the server watches; a report or a HAR file may be cut off by Ctrl-C. In each case the old file stays whole
until the new one is, and a write that fails leaves no part file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def staged(path: str | Path) -> Iterator[IO[str]]:
    """A text file to write `path`'s new content into; it becomes `path` when the block ends without an exception."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            yield file
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_whole(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) as `path`'s new content, all at once for any reader."""
    with staged(path) as file:
        file.write(text)
