"""What our processes would import but never run: declined outright, or, in a server, run only when
first used."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

# Connexion imports requests (with urllib3, charset_normalizer, idna) for one use: fetching a `$ref`
# that names a remote URL, which neither document has. Importing it costs about 70 ms, a tenth of
# `evalmock serve`'s start. In a server process it runs on first use instead, so a remote `$ref`
# still works. Only there: a deferred package whose first use is an import of one of its modules
# (`from requests.structures import ...`) would run that module twice, and the harness's libraries
# use requests every way.
DEFERRED = ("requests",)

# httpx (which Starlette's test client imports, and Connexion imports that) imports its command-line
# client `httpx._main` (rich, pygments, click) because those happen to be installed. No server runs
# httpx's command line, so the import is declined the way httpx expects when they are missing: its
# `__init__` catches the ImportError and `httpx.main` only says how to install them. Saves about 0.1
# s and 4 MiB a process.
DECLINED = ("httpx._main",)


class DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds each of `names` where Python would, the first time it is imported, and defers running
    it.

    The module in `sys.modules` is a `LazyLoader` module: its code runs on the first attribute read.
    The finder leaves `sys.meta_path` once it has found every name, so later imports are untouched.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.waiting = set(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.waiting:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None  # another finder may have it: imported as usual
        self.waiting.discard(fullname)
        if not self.waiting:
            # Python stops going through `sys.meta_path` at a found spec, so leaving it now skips no
            # finder.
            sys.meta_path.remove(self)
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def decline_unused() -> None:
    """Decline what no process of ours runs, unless the process has imported it already."""
    if "httpx" not in sys.modules:
        for name in DECLINED:
            sys.modules.setdefault(name, None)  # type: ignore[assignment]


def defer_unused() -> None:
    """In a server process, before Connexion is imported: defer what serving never runs."""
    waiting = [name for name in DEFERRED if name not in sys.modules]
    if waiting and not any(isinstance(finder, DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeferringFinder(waiting))
