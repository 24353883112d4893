"""A file a user names is read bounded: a FIFO, a link to /dev/zero, an oversized file or a HAR of
the wrong shape is refused with a clear error, never a hang, a traceback or memory without end."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from evalmock.contract import targets
from evalmock.contract.targets import TargetsError, load_targets
from evalmock.harness.traffic import har
from evalmock.harness.traffic.har import HarError, read_har
from evalmock.world import World, data_files
from evalmock.world.data_files import DataFileError, load_data


def fifo(tmp_path: Path, name: str) -> Path:
    """A FIFO: opened for reading, it waits for a writer. So that a reader that opens it anyway
    (the defect) gets an empty file rather than hanging, a writer comes by within two seconds."""
    path = tmp_path / name
    os.mkfifo(path)

    def writer() -> None:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # only once a reader waits
                return
            except OSError:
                time.sleep(0.05)

    threading.Thread(target=writer, daemon=True).start()
    return path


def device(tmp_path: Path, name: str) -> Path:
    """A link to a device. /dev/zero, the attack, never ends; /dev/null, a device all the same,
    lets a reader that reads it anyway (the defect) stop."""
    path = tmp_path / name
    path.symlink_to("/dev/null")
    return path


@pytest.mark.parametrize("make", [fifo, device], ids=["fifo", "device"])
def test_a_har_that_is_not_a_regular_file_is_refused(tmp_path: Path, make: object) -> None:
    with pytest.raises(HarError, match="not a regular file"):
        list(read_har(make(tmp_path, "traffic.har")))  # type: ignore[operator]


def test_a_har_over_the_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(har, "MAX_HAR_BYTES", 64)
    path = tmp_path / "traffic.har"
    path.write_text('{"log": {"entries": []}, "padding": "' + "x" * 100 + '"}')
    with pytest.raises(HarError, match="larger than 64 bytes"):
        list(read_har(path))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"log": []}', "not a HAR log"),
        ('{"log": {"entries": {}}}', "not a HAR log"),
        ("[" * 100_000 + "]" * 100_000, "deeper than a HAR audit reads"),
    ],
    ids=["log-a-list", "entries-an-object", "nested-100000-deep"],
)
def test_a_har_of_the_wrong_shape_is_a_clear_error(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "traffic.har"
    path.write_text(text)
    with pytest.raises(HarError, match=says):
        list(read_har(path))


@pytest.mark.parametrize("make", [fifo, device], ids=["fifo", "device"])
def test_a_data_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, make: object) -> None:
    with pytest.raises(DataFileError, match="not a regular file"):
        load_data([make(tmp_path, "shop.json")], World(seed=1, cases=1))  # type: ignore[operator]


def test_a_data_file_over_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(data_files, "MAX_DATA_BYTES", 16)
    path = tmp_path / "shop.json"
    path.write_text('{"testSet": [], "gradient": []}')
    with pytest.raises(DataFileError, match="larger than 16 bytes"):
        load_data([path], World(seed=1, cases=1))


@pytest.mark.parametrize("make", [fifo, device], ids=["fifo", "device"])
def test_a_targets_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, make: object) -> None:
    with pytest.raises(TargetsError, match="not a regular file"):
        load_targets(make(tmp_path, "targets.toml"))  # type: ignore[operator]


def test_a_targets_file_over_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(targets, "MAX_TARGETS_BYTES", 8)
    path = tmp_path / "targets.toml"
    path.write_text("[auth]\ntoken = 'a long enough token'\n")
    with pytest.raises(TargetsError, match="larger than 8 bytes"):
        load_targets(path)
