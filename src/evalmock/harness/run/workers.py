"""The audit's worker threads, in which Hypothesis draws the same cases for a seed whatever else
runs beside them.

Three things made a Schemathesis shard's requests depend on more than its seed, and a pool sets them
aside while it is open (all three are put back when the last pool closes):

- **One `random` generator for every thread.** Hypothesis seeds the `random` module's generator for
  each test case it runs and restores it after, and Schemathesis draws from it while it builds a
  case (`random.random() < probability`). Threads sharing it seed and draw over each other. In a
  pool, the module's functions (`random.random`, `random.seed`, ...) call the calling thread's own
  generator; the main thread keeps the module's.
- **`ast.parse` in two threads at once.** CPython before 3.12 may then fail one of them ("AST
  constructor recursion depth mismatch", gh-106905), and Hypothesis parses source to describe and to
  analyse strategies: a shard that met it was run again, and after three times left out with a note.
  In a pool, one parse runs at a time.
- **Constants mined from "local" source.** Hypothesis now and then draws a literal found in the
  source of a loaded module outside site-packages and the standard library, and caches them in
  `.hypothesis/constants` in the working folder. Which modules those are depends on how evalmock is
  installed (a checkout's are local, a wheel's are not), on the user's own code beside the pytest
  plugin and on what was imported by then, so the same seed sent other requests from a checkout than
  from the image. In a pool, Hypothesis finds no local constant (its own list of common ones stays),
  and writes nothing in the working folder. Hypothesis has no setting for this (its issue #4627 asks
  for one): a private function is replaced, and nothing is if a later Hypothesis no longer has it.
"""

from __future__ import annotations

import ast
import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants

from evalmock.defaults import AUDIT_THREADS

_SHARED: random.Random = random._inst  # type: ignore[attr-defined]  # behind random.random() and the others
# The module's functions that are the shared generator's methods (`seed`, `getstate` and `setstate`
# among them, which is what Hypothesis calls), read from the module so that every Python version's
# list is right.
_FUNCTIONS = tuple(
    name for name in random.__all__ if getattr(getattr(random, name), "__self__", None) is _SHARED
)


class _Generators(threading.local):
    """Each thread's generator: the module's own in the main thread, a new one (seeded by the OS)
    elsewhere."""

    def __init__(self) -> None:
        main = threading.current_thread() is threading.main_thread()
        self.generator = _SHARED if main else random.Random()


_generators = _Generators()


def _per_thread(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_generators.generator, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


_PARSE = ast.parse
# re-entrant: a collector's finalizer may parse in the thread already parsing
_parsing = threading.RLock()


def _one_parse_at_a_time(*args: Any, **kwargs: Any) -> Any:
    with _parsing:
        return _PARSE(*args, **kwargs)


def _no_local_constants() -> Constants:
    return Constants()


_MINED = getattr(providers, "_get_local_constants", None)
# the pools, built with them
_DRAWN_FROM = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)


def _replacements() -> list[tuple[object, str, object, object]]:
    """Each (module, name, its value while a pool is open, its own value)."""
    replaced: list[tuple[object, str, object, object]] = [
        (random, name, _per_thread(name), getattr(_SHARED, name)) for name in _FUNCTIONS
    ]
    replaced.append((ast, "parse", _one_parse_at_a_time, _PARSE))
    if _MINED is not None:
        replaced.append((providers, "_get_local_constants", _no_local_constants, _MINED))
    return replaced


_REPLACEMENTS = _replacements()
_lock = threading.Lock()
_open = 0  # pools open now


def _set(opening: bool) -> None:
    for module, name, inside, outside in _REPLACEMENTS:
        setattr(module, name, inside if opening else outside)
    if isinstance(_DRAWN_FROM, dict):
        _DRAWN_FROM.clear()


@contextmanager
def isolated_generation() -> Iterator[None]:
    """While open, threads draw apart, parse one at a time and mine no constant (re-entrant,
    thread-safe)."""
    global _open
    with _lock:
        if _open == 0:
            _set(opening=True)
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                _set(opening=False)


@contextmanager
def worker_pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """`workers` threads for an audit's tasks, generating as the module docstring says. Left by an
    exception (Ctrl-C among them), the tasks not started are dropped and the running ones are not
    waited for."""
    with isolated_generation():
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=AUDIT_THREADS)
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
