"""In the audit's workers a shard draws what its seed says and nothing else: each thread from its
own `random` generator, one `ast.parse` at a time, and no constant mined from whatever local code is
loaded."""

from __future__ import annotations

import ast
import importlib
import inspect
import json.decoder
import random
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from evalmock.harness.run.workers import isolated_generation, worker_pool


def sequence(seed: int, length: int) -> list[float]:
    generator = random.Random(seed)
    return [generator.random() for _ in range(length)]


def test_two_workers_seeding_and_drawing_in_turn_each_get_their_own_seed_s_numbers() -> None:
    """As Hypothesis does in two shards at once: each seeds `random`, then draws, the draws
    interleaved."""
    # a failing worker breaks it rather than leaving the other waiting
    turns = threading.Barrier(2, timeout=10)

    def shard(seed: int) -> list[float]:
        random.seed(seed)
        # both have seeded before either draws: one shared generator would hold the later seed
        turns.wait()
        drawn = []
        for _ in range(5):
            drawn.append(random.random())
            turns.wait()
        return drawn

    with worker_pool(2) as pool:
        first, second = pool.submit(shard, 1), pool.submit(shard, 2)
        assert first.result(timeout=10) == sequence(1, 5)
        assert second.result(timeout=10) == sequence(2, 5)


def test_the_main_thread_keeps_the_module_s_generator_and_its_state() -> None:
    random.seed(7)
    expected = sequence(7, 3)
    with worker_pool(1) as pool:
        pool.submit(random.seed, 99).result(timeout=10)  # a worker's seed is its own
        assert [random.random() for _ in range(3)] == expected


def test_the_module_s_functions_are_put_back_when_the_last_pool_closes() -> None:
    shared = random.random.__self__  # type: ignore[attr-defined]
    parse = ast.parse
    with isolated_generation(), isolated_generation():
        assert getattr(random.random, "__self__", None) is None
        assert ast.parse is not parse
    assert random.random.__self__ is shared  # type: ignore[attr-defined]
    assert random.setstate.__self__ is shared  # type: ignore[attr-defined]
    assert ast.parse is parse


def texts_drawn() -> list[str]:
    """What Hypothesis draws for one fixed seed, as Schemathesis's runs draw strings."""
    drawn: list[str] = []

    @settings(max_examples=400, database=None, derandomize=True, phases=[Phase.generate])
    @given(st.text(min_size=1))
    def collect(text: str) -> None:
        drawn.append(text)

    collect()
    return drawn


def test_the_same_seed_draws_the_same_strings_whatever_local_code_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout, a wheel and a user's project load other "local" modules: none of their literals
    is drawn."""
    with isolated_generation():
        before = texts_drawn()
    # 800 distinct literals: Hypothesis mines none from a module holding over 1,024.
    (tmp_path / "mined_module.py").write_text(
        "WORDS = [" + ", ".join(f"'zz-mined-{i}'" for i in range(800)) + "]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("mined_module")
    try:
        with isolated_generation():
            after = texts_drawn()
    finally:
        sys.modules.pop("mined_module", None)
    assert not [text for text in after if text.startswith("zz-mined")]
    assert after == before


class Finalized:
    """Garbage in a cycle whose finalizer runs Python code, as an audit's does: a collection in the
    middle of a parse then lets another thread run, and parse."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(200))


def test_threads_parsing_at_once_never_meet_the_ast_race_of_python_before_3_12() -> None:
    """gh-106905: "AST constructor recursion depth mismatch", which made a shard run again or be
    left out."""
    # unguarded, 4 threads parsing it 25 times each fail about 12 times
    source = inspect.getsource(json.decoder)
    errors: list[str] = []

    def parse() -> None:
        for _ in range(25):
            garbage = [Finalized() for _ in range(50)]
            del garbage
            try:
                ast.parse(source)
            except (SystemError, ValueError) as error:
                errors.append(str(error))

    with worker_pool(4) as pool:
        for future in [pool.submit(parse) for _ in range(4)]:
            future.result(timeout=120)
    assert errors == []
