"""The world is a pure function of its seed: same seed, same world, in any process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalmock.world import CaseQuery, World

from .helpers import world_digest

# Run from the tests folder, so that `world.helpers` is importable in the fresh process.
DIGEST_SCRIPT = """
from evalmock.world import World
from world.helpers import world_digest
print(world_digest(World(seed={seed}, cases=40)))
"""
TESTS_DIR = Path(__file__).resolve().parents[1]


def test_two_worlds_with_one_seed_are_equal():
    first, second = World(seed=7, cases=40), World(seed=7, cases=40)
    assert first.agent_ids() == second.agent_ids()
    assert [first.project_ids(a) for a in first.agent_ids()] == [
        second.project_ids(a) for a in second.agent_ids()
    ]
    assert world_digest(first) == world_digest(second)


def test_another_seed_gives_another_world():
    first, second = World(seed=7, cases=40), World(seed=8, cases=40)
    assert first.project_ids("acme.drafting") != second.project_ids("acme.drafting")
    query = CaseQuery("example", "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0")
    generated = [
        case["id"] for case in first.page(query, None, 20).cases if "fixture" not in case["id"]
    ]
    other = [
        case["id"] for case in second.page(query, None, 20).cases if "fixture" not in case["id"]
    ]
    assert generated != other
    assert world_digest(first) != world_digest(second)


def test_a_fresh_process_with_other_string_hashing_builds_the_same_world():
    # Python's own hash() of strings changes per process; the world must not depend on it.
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", DIGEST_SCRIPT.format(seed=42)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=TESTS_DIR,
    )
    assert result.stdout.strip() == world_digest(World(seed=42, cases=40))


def test_generated_cases_do_not_depend_on_the_world_size():
    small, large = World(seed=3, cases=40), World(seed=3, cases=5_000_000)
    query = CaseQuery("globex.search", small.project_ids("globex.search")[0], include_retired=True)
    assert small.page(query, None, 30).cases == large.page(query, None, 30).cases
