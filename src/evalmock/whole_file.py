"""Files written whole: beside their final name, then renamed into place, so that a reader never
sees half of one.

A targets file is rewritten by a running server while a harness may be reading it; an export may go
over a data file the server watches; a report or a HAR file may be cut off by Ctrl-C. In each case
the old file stays whole until the new one is, and a write that fails leaves no part file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

# The process's umask, read once at import (setting it is the only way to read it, and not safe
# beside threads).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


@contextlib.contextmanager
def staged(path: str | Path) -> Iterator[IO[str]]:
    """A text file to write `path`'s new content into; it becomes `path` when the block ends without
    an exception."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        # mkstemp makes the file 0600: the file keeps the mode it had, or gets the one open() would
        # give it, so a report or targets file stays readable to whoever read it before (a CI's
        # artifacts, another container).
        os.fchmod(handle, _mode_of(path))
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            yield file
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def write_whole(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) as `path`'s new content, all at once for any reader."""
    with staged(path) as file:
        file.write(text)
