"""A seed's word pools kept on disk: read back equal to the drawn ones, never another Faker's, and
passed over (drawn again) whenever the file cannot be read, written or understood."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from evalmock.paths import CACHE_ENV, cache_dir
from evalmock.world import start_cache
from evalmock.world.start_cache import (
    fixtures_passed_before,
    kept_vocabulary,
    pools_file,
    remember_fixtures_passed,
)
from evalmock.world.vocabulary import build_vocabulary


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def no_faker(seed: int) -> None:
    raise AssertionError(f"the pools of seed {seed} were drawn again")


def test_kept_pools_are_the_drawn_pools_and_are_read_back_without_drawing(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = build_vocabulary(7)
    assert kept_vocabulary(7) == drawn  # drawn, then kept
    assert pools_file(folder, 7).is_file()
    monkeypatch.setattr(start_cache, "build_vocabulary", no_faker)
    assert kept_vocabulary(7) == drawn  # read back


def test_each_seed_has_its_own_file(folder: Path) -> None:
    assert kept_vocabulary(1) != kept_vocabulary(2)
    assert pools_file(folder, 1) != pools_file(folder, 2)


def test_pools_drawn_by_another_faker_are_never_read(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept_vocabulary(7)
    ours = pools_file(folder, 7)
    monkeypatch.setattr(start_cache.importlib.metadata, "version", lambda name: "0.0.1")
    assert pools_file(folder, 7) != ours


def other_types() -> bytes:
    pools = json.loads(pools_file(cache_dir() or Path(), 7).read_bytes())
    pools["nouns"] = "a string, not a list of them"
    return json.dumps(pools).encode()


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"people": []}', b"", other_types])
def test_a_file_not_understood_is_drawn_again_and_replaced(
    folder: Path, content: bytes | Callable[[], bytes]
) -> None:
    kept_vocabulary(7)
    path = pools_file(folder, 7)
    content = content() if callable(content) else content
    path.write_bytes(content)
    assert kept_vocabulary(7) == build_vocabulary(7)
    assert path.read_bytes() != content


def test_an_unwritable_folder_only_means_drawing_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    assert kept_vocabulary(7) == build_vocabulary(7)


def test_keeping_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None
    assert kept_vocabulary(7) == build_vocabulary(7)


def test_the_default_folder_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "evalmock"


def test_fixtures_that_cannot_be_read_have_no_kept_pass(folder: Path, tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    # read as a fixture file, it fails: the check says why
    (fixtures / "a-folder.json").mkdir(parents=True)
    remember_fixtures_passed(fixtures, 7)
    assert not fixtures_passed_before(fixtures, 7)


def test_without_a_home_nothing_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no HOME, no passwd entry
    assert cache_dir() is None


def test_a_relative_xdg_cache_home_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "evalmock"
