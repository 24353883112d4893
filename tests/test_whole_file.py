"""A file written whole: a reader sees the old content or the new one, never a part; a failed write
changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalmock.whole_file import _is_device_or_pipe, staged, write_whole


def test_the_new_content_replaces_the_old_and_nothing_else_is_left(tmp_path: Path) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text("old\n", encoding="utf-8")
    write_whole(path, "new ✓\n")
    assert path.read_text(encoding="utf-8") == "new ✓\n"
    assert [entry.name for entry in tmp_path.iterdir()] == ["targets.yaml"]


def test_a_reader_of_the_old_file_reads_it_whole_while_it_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text("old content\n", encoding="utf-8")
    with path.open(encoding="utf-8") as reader:
        write_whole(path, "new\n")
        # written in place, the file would have been emptied under it
        assert reader.read() == "old content\n"
    assert path.read_text(encoding="utf-8") == "new\n"


def test_a_write_that_fails_keeps_the_old_file_and_leaves_no_part(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text("the last report\n", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt), staged(path) as file:
        file.write("half a rep")
        raise KeyboardInterrupt
    assert path.read_text(encoding="utf-8") == "the last report\n"
    assert [entry.name for entry in tmp_path.iterdir()] == ["report.html"]


def test_a_folder_that_does_not_exist_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_whole(tmp_path / "missing" / "targets.yaml", "text")


def test_a_new_file_gets_the_mode_open_would_give_and_a_rewritten_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    # A temporary file is made 0600: a report or targets file would turn unreadable to anyone who
    # read it before.
    new = tmp_path / "report.html"
    write_whole(new, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask != 0o600
    kept = tmp_path / "targets.toml"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o640)
    write_whole(kept, "new")
    assert kept.stat().st_mode & 0o777 == 0o640


def test_a_device_is_told_from_a_file_so_it_is_written_in_place() -> None:
    # renaming a staged file over /dev/null would replace the device with a file (as root); the
    # writing itself is proved on a pipe below, which a failing test cannot break for the machine
    assert _is_device_or_pipe(Path("/dev/null"))
    assert not _is_device_or_pipe(Path(__file__))


def test_a_pipe_is_written_in_place(tmp_path: Path) -> None:
    pipe = tmp_path / "report.fifo"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_whole(pipe, "through the pipe\n")
        assert os.read(reader, 100) == b"through the pipe\n"
    finally:
        os.close(reader)
    assert pipe.is_fifo() and [entry.name for entry in tmp_path.iterdir()] == ["report.fifo"]


def test_a_link_stays_a_link_and_its_target_gets_the_new_content(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "latest.html"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    write_whole(link, "new\n")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new\n"


def test_the_new_content_is_on_disk_before_it_takes_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # renamed before its bytes reach the disk, a crash of the machine may leave an empty file
    done: list[str] = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (done.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda *paths: (done.append("replace"), replace(*paths))[1])
    write_whole(tmp_path / "data.yaml", "new\n")
    assert done == ["fsync", "replace"]
