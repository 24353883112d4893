"""Reading a file a user names (a HAR, a data or targets file): a regular file only, bounded."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The file's bytes; OSError, with a reason in `strerror`, for anything but a regular file (a
    FIFO would never end, a device such as /dev/zero neither) or a file over `limit` bytes."""
    with open_regular(path) as file:
        raw = file.read(limit + 1)
    if len(raw) > limit:
        raise OSError(errno.EFBIG, too_large(limit), str(path))
    return raw


def open_regular(path: str | Path) -> BinaryIO:
    """The file opened to read its bytes; OSError, with a reason in `strerror`, for anything but a
    regular file."""
    mode = os.stat(path).st_mode  # follows a link: a link to /dev/zero is a device
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file (a folder, a FIFO or a device)", str(path))
    return open(path, "rb")  # the caller closes it


def too_large(limit: int) -> str:
    return f"larger than {limit:,} bytes, the most read"
