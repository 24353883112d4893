"""The Docker engine for the container tests: found, or every container test skipped saying why."""

from __future__ import annotations

import importlib.util
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_engine() -> ModuleType:
    # deploy/engine.py is dev.py's engine step, not part of the package: loaded by path.
    spec = importlib.util.spec_from_file_location(
        "evalmock_engine_step", ROOT / "deploy" / "engine.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


engine = _load_engine()


def docker(
    *args: str, timeout: float = 120, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [engine.docker(), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"docker {' '.join(args)} exited with {result.returncode}:\n{result.stderr}"
        )
    return result


@pytest.fixture(scope="session")
def image() -> str:
    """evalmock:latest built from this tree (Docker's cache makes a rebuild of unchanged inputs take
    seconds)."""
    if not engine.engine_ready():
        pytest.skip(
            "no Docker engine answers here; `python3.11 dev.py engine` sets one up (as root, on "
            "Debian)"
        )
    return engine.build_image()[-1]


@pytest.fixture
def names() -> Iterator[list[str]]:
    """Containers and volumes a test creates, removed afterwards whatever happens."""
    created: list[str] = []
    yield created
    for name in created:
        docker("rm", "--force", "--volumes", name, check=False)
        docker("volume", "rm", "--force", name, check=False)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
