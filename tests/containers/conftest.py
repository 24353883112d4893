"""The Docker engine for the container tests: found, or every container test skipped saying why."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
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


def compose_installed() -> bool:
    try:
        return (
            subprocess.run(
                [*engine.compose(), "version"], capture_output=True, timeout=30
            ).returncode
            == 0
        )
    except OSError:
        return False


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


@pytest.fixture(scope="session")
def dev_py_image() -> str:
    """`python3.11 dev.py image` run as a user runs it (Docker's cache makes it take seconds): its
    output."""
    if not engine.engine_ready():
        pytest.skip(
            "no Docker engine answers here; `python3.11 dev.py engine` sets one up (as root, on "
            "Debian)"
        )
    if missing := [base for base in engine.ROOTFS_PACKAGES if not engine.image_exists(base)]:
        # dev.py image would make them itself: minutes of debootstrap, as root, inside a test
        pytest.skip(
            f"no {' or '.join(missing)} here; `python3.11 dev.py engine` makes them (as root, on "
            "Debian)"
        )
    run = subprocess.run(
        [sys.executable, str(ROOT / "dev.py"), "image"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout


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
