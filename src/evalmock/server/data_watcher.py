"""Live reload: watch the user's data files, and on a change reload the served world (or keep it,
and say why).

The watcher is a thread, so reading and checking a large file never blocks the event loop. It
watches the files' folders, not the files, because editors save by writing a new file and renaming
it over the old one. Some save in place instead (truncate, then write), so a change is read once the
files have held still for a moment, and a refused change is read once more after another moment
before the refusal is said. A change saved after the served world was read but before the watch
began (a slow start) is caught by the files' size and time, taken before that read.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from evalmock.nouns import counted
from evalmock.server.live_world import LiveWorld
from evalmock.world import World
from evalmock.world.data_files import DataFileError

if TYPE_CHECKING:
    import watchfiles

STEP_MS = 50  # a change is reloaded once the files have been quiet this long
STOP_CHECK_MS = 500  # how often the thread looks whether it should stop
SETTLE_S = 0.2  # the files are read once their size and time have held still this long
MAX_SETTLE_S = 2.0  # a file written without pause for longer is read as it is then


FilesState = list[tuple[int, int] | None]


def files_state(paths: list[str] | tuple[str, ...]) -> FilesState:
    """Each file's size and modification time (None while it is missing)."""
    found: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            found.append(None)
        else:
            found.append((stat.st_size, stat.st_mtime_ns))
    return found


def _real(path: str) -> str:
    """The path with its folder's symbolic links resolved (the file itself may be gone for a
    moment)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(folder), name)


class DataWatcher:
    """Reloads `live` whenever one of its data files changes; says on stderr what came of each
    change."""

    def __init__(
        self,
        live: LiveWorld,
        on_reload: Callable[[World], None] | None = None,
        read: FilesState | None = None,
    ) -> None:
        """`read`: the files' state (files_state) taken before the served world read them; None:
        only changes after the watch begins are seen."""
        self.live = live
        self.on_reload = on_reload
        self._read = read
        self._files = {_real(path) for path in live.data_files}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # The problems last said: one save can come as several changes (`sed -i` writes a new file
        # and renames it over the old), and the same refusal is said once.
        self._refused: list[str] | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._watch, name="evalmock-data-watcher", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        # here, not at the top: a server without data files never pays its 25 ms of start-up
        import watchfiles

        folders = sorted({os.path.dirname(path) for path in self._files})
        read = self._read  # compared once, at the first pass of the watch
        try:
            for changes in watchfiles.watch(
                *folders,
                watch_filter=self._is_data_file,
                step=STEP_MS,
                rust_timeout=STOP_CHECK_MS,
                yield_on_timeout=True,
                stop_event=self._stop,
                recursive=False,
                raise_interrupt=False,
            ):
                # a pass without changes means the watch has begun: a change saved between the
                # world's read and then is seen by the files' size and time, as no event brings it
                unchanged = read is None or files_state(self.live.data_files) == read
                read = None
                if not changes and unchanged:
                    continue
                self.settle()
                self.reload(again_before_refusing=True)
        except Exception as exc:  # a folder removed, say: the server keeps serving what it has
            self._say(
                f"evalmock serve: no longer watching the data files ({type(exc).__name__}: {exc}); "
                "restart to pick up changes"
            )

    def _is_data_file(self, change: watchfiles.Change, path: str) -> bool:
        return _real(path) in self._files

    def settle(self) -> None:
        """Wait until the files have held still for SETTLE_S (at most MAX_SETTLE_S), or the watcher
        stops."""
        paths = list(self.live.data_files)
        before = files_state(paths)
        for _ in range(round(MAX_SETTLE_S / SETTLE_S)):
            if self._stop.wait(SETTLE_S):
                return
            now = files_state(paths)
            if now == before:
                return
            before = now

    def reload(self, *, again_before_refusing: bool = False) -> None:
        """Load the files again now: swap in the new world, or keep the old one and list the
        problems.

        With `again_before_refusing`, a refused change is read once more after the files settle: a
        save in place can be caught between its truncation and its write, and an empty file is not
        what was meant.
        """
        files = ", ".join(self.live.data_files)
        before = self.live.world
        try:
            changed = self.live.reload()
        except DataFileError as error:
            if again_before_refusing and not self._stop.is_set():
                self.settle()
                self.reload()
                return
            problems = list(map(str, error.problems))
            if problems != self._refused:
                self._refused = problems
                self._say(
                    "evalmock serve: refused the changed data, "
                    f"{counted(len(problems), 'problem')}; still serving the previous data:",
                    *problems,
                )
            return
        self._refused = None
        if changed:
            world = self.live.world
            count = len(world.lists_changed_since(before))
            cursors = (
                f"{counted(count, 'list')} changed: their cursors issued before "
                "now start the list again; other lists' cursors go on."
                if count
                else "no list changed, so every cursor goes on."
            )
            self._say(f"evalmock serve: reloaded {files}: {world.data.summary()}; {cursors}")
            if self.on_reload is not None:
                self.on_reload(world)

    def _say(self, *lines: str) -> None:
        print("\n".join(lines), file=sys.stderr, flush=True)

    def lifespan(self, app: Any) -> contextlib.AbstractAsyncContextManager[None]:
        """An ASGI lifespan that watches while the server runs."""

        @contextlib.asynccontextmanager
        async def watching() -> AsyncIterator[None]:
            self.start()
            try:
                yield
            finally:
                self.stop()

        return watching()
