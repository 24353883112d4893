"""Files written whole: beside their final name, then renamed into place, so that a reader never
sees half of one.

A targets file is rewritten by a running server while a harness may be reading it; an export may go
over a data file the server watches; a report or a HAR file may be cut off by Ctrl-C. In each case
the old file stays whole until the new one is, and a write that fails leaves no part file behind.
The new file is on disk before it takes the name (fsync), so a crash of the machine just after the
rename leaves the old file or the new one, never an empty one.

A device or a pipe (`--junit /dev/null`, `--report /dev/stdout`, a FIFO) is written in place:
renaming over it would replace the device with a file (as root, /dev/null itself). A symbolic link
stays a link: its target gets the new content.
"""

from __future__ import annotations

import contextlib
import os
import stat
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
    if _is_device_or_pipe(path):
        with path.open("w", encoding="utf-8") as special:
            yield special
        return
    if path.is_symlink():
        path = path.resolve()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        # mkstemp makes the file 0600: the file keeps the mode it had, or gets the one open() would
        # give it, so a report or targets file stays readable to whoever read it before (a CI's
        # artifacts, another container).
        os.fchmod(handle, _mode_of(path))
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _is_device_or_pipe(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def write_whole(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) as `path`'s new content, all at once for any reader."""
    with staged(path) as file:
        file.write(text)
