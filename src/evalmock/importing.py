"""Importing what lives as long as the process: with the garbage collector paused, and what it made
frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived() -> Iterator[None]:
    """Make objects that live as long as the process (imported modules): no collection while they
    are made, and none scans them afterwards.

    Importing a command's dependencies (Connexion, jsonschema, Starlette, ...) would make some 130
    collections that free almost nothing, and a collection of everything imported still takes some
    70 ms once the collector runs again. Instead the objects are frozen, as Python's `gc.freeze`
    documentation advises for a server's start: the collector ignores them from then on. The price
    is the garbage the imports leave (about 1,900 objects), which is kept instead of freed.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
