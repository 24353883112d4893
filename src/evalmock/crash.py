"""What an internal error says of itself: where evalmock broke, never the error's own text."""

from __future__ import annotations

import os
import traceback

from evalmock.exits import CRASHED


def crash_line(exc: BaseException) -> str:
    """What failed, without the error's own text: it may quote what a service sent, secrets too."""
    frames = traceback.extract_tb(exc.__traceback__)
    # The innermost frame, and the last of ours before it: where it broke, and what we asked of it.
    ours = [frame for frame in frames[:-1] if f"{os.sep}evalmock{os.sep}" in frame.filename]
    places = [
        f"{f.name} ({os.path.basename(f.filename)}:{f.lineno})" for f in (*frames[-1:], *ours[-1:])
    ]
    where = f" in {', called from '.join(places)}" if places else ""
    return (
        f"evalmock: internal error, not a verdict on the service: {type(exc).__name__}{where}; "
        f"exit {CRASHED}"
    )
