"""Recorded traffic is hostile: `fixtures import` refuses what a data file cannot hold per case,
naming its HAR entry, in either format; refuses a HAR that is no regular file; and reads and writes
in bounded memory whatever the recording holds (each import run in a process of its own, its peak
RSS measured, as tests/harness/test_har_memory.py does)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from child_peak import evalmock_peak
from data_builders import AGENT, PROJECT, TEST_CASE, case, version
from evalmock.cli import main
from evalmock.exits import INTERRUPTED
from evalmock.harness.traffic.har_stream import CUT, har_entries, string_bound
from evalmock.recording.accumulator import MAX_BODY_BYTES, MAX_ITEM_BYTES
from evalmock.world import World
from evalmock.world.data_files import load_data

from .har_files import entry, evaluation_url, har, list_url, page

MIB = 2**20
BOUND = 300 * MIB  # the peak RSS no import may pass, whatever its HAR holds


def import_peak(har_path: Path, out: Path) -> tuple[int, int, str]:
    """`evalmock fixtures import` in a child of its own: its exit code, peak RSS and what it
    said."""
    return evalmock_peak("fixtures", "import", "--har", str(har_path), "-o", str(out))


def streamed_har(path: Path, entries: Iterator[dict]) -> Path:
    """A HAR file of `entries`, written one at a time (never the whole document in memory)."""
    with path.open("w", encoding="utf-8") as file:
        file.write('{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, ')
        file.write('"entries": [')
        for number, one in enumerate(entries):
            file.write(("," if number else "") + json.dumps(one))
        file.write("]}}")
    return path


@pytest.mark.parametrize("output", ["data.json", "data.yaml"])
@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400", "-1e400", "123456789012345678901"])
def test_a_number_a_data_file_cannot_hold_leaves_its_case_out_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, number: str
) -> None:
    good = case("case-good", "2026-10-05T12:00:00Z")
    bad = json.dumps(case("case-bad", "2026-10-04T12:00:00Z", expect="@"))
    text = f'{{"data": [{json.dumps(good)}, {bad.replace(chr(34) + "@" + chr(34), number)}]}}'
    path = har(tmp_path / "staging.har", [entry(list_url(AGENT, PROJECT), 200, text)])
    out = tmp_path / output
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    data = load_data([out], World(generated=False))
    assert [c["id"] for listed in data.lists for c in listed.cases] == ["case-good"]
    assert f"staging.har entry 0 (GET {list_url(AGENT, PROJECT)}): /data/1: /expect: " in said
    assert "left out" in said


@pytest.mark.parametrize("output", ["data.json", "data.yaml"])
def test_a_version_a_data_file_cannot_hold_is_left_out_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    text = json.dumps({"evaluation_test_case": version(1, total_runs=0)}).replace(
        '"total_runs": 0', '"total_runs": NaN'
    )
    path = har(tmp_path / "staging.har", [entry(evaluation_url(TEST_CASE), 200, text)])
    out = tmp_path / output
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "/evaluation_test_case: /total_runs: nan is not a JSON number; left out" in said
    load_data([out], World(generated=False))


def test_a_fifo_as_har_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "endless.har"
    os.mkfifo(fifo)
    out = tmp_path / "data.yaml"
    command = [sys.executable, "-m", "evalmock", "fixtures", "import", "--har", str(fifo)]
    # in a process of its own: a read of the FIFO would wait for ever
    done = subprocess.run(
        [*command, "-o", str(out)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "not a regular file" in done.stderr
    assert not out.exists()


def test_a_case_over_the_size_a_recording_keeps_is_left_out_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = case("case-big", "2026-10-04T12:00:00Z", runId="r" * MAX_ITEM_BYTES)
    good = case("case-good", "2026-10-05T12:00:00Z")
    path = har(tmp_path / "staging.har", [entry(list_url(AGENT, PROJECT), 200, page([good, big]))])
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"more than the {MAX_ITEM_BYTES:,} a recording keeps of one item; left out" in said
    assert f"staging.har entry 0 (GET {list_url(AGENT, PROJECT)}): /data/1: " in said
    assert b"case-big" not in out.read_bytes() and b"case-good" in out.read_bytes()


def test_200_cases_of_a_megabyte_each_stay_in_bounded_memory(tmp_path: Path) -> None:
    # 200 MB of HAR; each case held whole, the import took 1,222 MiB
    def entries() -> Iterator[dict]:
        for number in range(200):
            big = case(f"case-{number}", "2026-10-04T12:00:00Z", runId="r" * MIB)
            yield entry(list_url(AGENT, PROJECT, f"&cursor=c{number}"), 200, page([big]))

    path = streamed_har(tmp_path / "big.har", entries())
    code, peak, said = import_peak(path, tmp_path / "data.yaml")
    assert code == 0, said
    assert "left out (200):" in said
    assert peak < BOUND, f"{peak / MIB:.0f} MiB"


def test_a_base64_body_over_the_bound_is_left_out_never_decoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = entry(list_url(AGENT, PROJECT), 200, "")
    one["response"]["content"]["encoding"] = "base64"
    one["response"]["content"]["text"] = base64.b64encode(b"{" * (MAX_BODY_BYTES + 3)).decode()
    path = har(tmp_path / "bomb.har", [one])
    out = tmp_path / "data.yaml"
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert (
        f"bomb.har entry 0 (GET {list_url(AGENT, PROJECT)}): the answer's body is "
        f"{MAX_BODY_BYTES + 3:,} bytes, more than the {MAX_BODY_BYTES:,} a recording reads" in said
    )


def test_a_base64_body_of_150_mib_is_cut_as_it_is_parsed_never_held(tmp_path: Path) -> None:
    # held whole while parsed, then decoded, the import peaked at 812 MiB
    size = 150 * MIB
    one = entry(list_url(AGENT, PROJECT), 200, "")
    one["response"]["content"]["encoding"] = "base64"
    head, tail = json.dumps(one).split('"text": ""')
    path = tmp_path / "bomb.har"
    with path.open("w", encoding="ascii") as file:
        file.write('{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, ')
        file.write('"entries": [' + head + '"text": "')
        block = base64.b64encode(b"{" * 3 * MIB).decode()
        for _ in range(size // (3 * MIB)):
            file.write(block)
        file.write('"' + tail + "]}}")
    code, peak, said = import_peak(path, tmp_path / "data.yaml")
    assert code == 0, said
    assert f"the answer's body is more than the {MAX_BODY_BYTES:,} bytes a recording reads" in said
    assert peak < BOUND, f"{peak / MIB:.0f} MiB"


def test_a_body_of_escapes_past_the_strings_bound_is_named_by_its_text_not_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 8 MiB of control characters, 6 bytes of the HAR each: within the body's limit, its text past
    # the bound a string is cut at; what was read tells no body size
    one = entry(list_url(AGENT, PROJECT), 200, "\x01" * (MAX_BODY_BYTES // 2))
    path = har(tmp_path / "escapes.har", [one])
    assert main(["fixtures", "import", "--har", str(path), "-o", str(tmp_path / "data.yaml")]) == 0
    said = capsys.readouterr().out
    assert (
        f"escapes.har entry 0 (GET {list_url(AGENT, PROJECT)}): the answer's body's text is more "
        f"than the {string_bound(MAX_BODY_BYTES):,} bytes of a HAR file a recording reads" in said
    )


ALPHABET = ["a", "é", "€", "𝄞", "\\", '"', "\n", "\x01", "\\\\\\\\"]


def test_a_string_cut_as_it_is_parsed_is_its_start_and_the_mark_never_broken_json() -> None:
    """Cut anywhere (inside an escape, a \\u escape, a surrogate pair, a UTF-8 character, a piece
    read), a string is its own start followed by CUT; one within the bound is whole."""
    chance = random.Random(7)
    for _ in range(2_000):
        texts = [
            "".join(chance.choice(ALPHABET) for _ in range(chance.randint(0, 60))) for _ in range(3)
        ]
        document = {"log": {"entries": [{"t": text} for text in texts]}}
        raw = json.dumps(document, ensure_ascii=chance.random() < 0.5).encode()

        class Pieces(io.BytesIO):
            def read(self, size: int | None = -1) -> bytes:
                return super().read(chance.randint(1, 9))

        bound = chance.randint(8, 40)
        read = [e["t"] for e in har_entries(Pieces(raw), 2**30, max_string=bound)]
        assert len(read) == 3
        for text, got in zip(texts, read, strict=True):
            assert got == text or (got.endswith(CUT) and text.startswith(got[: -len(CUT)]))
    whole = {"log": {"entries": [{"t": "a" * 8}, {"t": "b" * 9}]}}
    read = list(har_entries(io.BytesIO(json.dumps(whole).encode()), 2**30, max_string=8))
    assert read == [{"t": "a" * 8}, {"t": "b" * 8 + CUT}]


def walked_cases(
    count: int, said: int, per_page: int = 100, *, drawn: bool = False
) -> Iterator[dict]:
    """The entries of one walk of `count` distinct valid cases, each saying `said` bytes more (hex
    digits drawn at random when `drawn`, which the store cannot compress away)."""
    chance = random.Random(count)
    for number in range(0, count, per_page):
        cases = [
            case(
                f"case-{n:06d}",
                f"2026-10-{1 + n % 28:02d}T12:{n // 60 % 60:02d}:{n % 60:02d}Z",
                expect={
                    "answer": {
                        "verdict": "wrong",
                        "shouldSay": f"{n} " + _padding(chance, said, drawn),
                    }
                },
            )
            for n in range(number, min(number + per_page, count))
        ]
        cursor = "" if number == 0 else f"&cursor=c{number}"
        following = f"c{number + per_page}" if number + per_page < count else None
        yield entry(list_url(AGENT, PROJECT, cursor), 200, page(cases, following))


def _padding(chance: random.Random, size: int, drawn: bool) -> str:
    return chance.randbytes(size // 2).hex() if drawn else "x" * size


def test_many_distinct_valid_cases_are_kept_on_disk_not_in_memory(tmp_path: Path) -> None:
    # 392k cases of 600 bytes ran out of 3.8 GB: here 12,000 of 6 KB (72 MB of HAR), which held
    # in memory as they were took 700 MiB (bench/har_import.py imports the 392k)
    count = 12_000
    path = streamed_har(tmp_path / "many.har", walked_cases(count, 6000))
    out = tmp_path / "data.json"
    code, peak, said = import_peak(path, out)
    assert code == 0, said
    assert f"{count} cases" in said
    assert peak < BOUND, f"{peak / MIB:.0f} MiB"


def test_the_imports_memory_does_not_grow_with_the_number_of_cases(tmp_path: Path) -> None:
    # Cases of 2.6 KB. Kept in memory, the 15,000 more took 53 MiB more; the store's cache takes 8
    # MiB at most. bench/har_import.py imports the trial's 392,000.
    peaks = []
    for count in (5_000, 20_000):
        path = streamed_har(tmp_path / f"{count}.har", walked_cases(count, 2000))
        code, peak, said = import_peak(path, tmp_path / f"{count}.json")
        assert code == 0, said
        assert f"{count} cases" in said
        peaks.append(peak)
    small, large = peaks
    assert large - small < 16 * MIB, f"{small / MIB:.0f} MiB, then {large / MIB:.0f} MiB"


def started_import(har_path: Path, out: Path, folder: Path) -> subprocess.Popen[bytes]:
    """`evalmock fixtures import` in a child of its own, `folder` its temporary folder."""
    command = [sys.executable, "-m", "evalmock", "fixtures", "import", "--har", str(har_path)]
    return subprocess.Popen(
        [*command, "-o", str(out)],
        env={**os.environ, "TMPDIR": str(folder)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def holds_open_in(pid: int, folder: Path) -> bool:
    """Whether the process holds a file of `folder` open (deleted or not)."""
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(folder)):
                return True
    return False


def wait_until(ready: Callable[[], bool], child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert child.poll() is None, child.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_killed_import_leaves_no_store_behind(tmp_path: Path) -> None:
    # SIGKILL runs no clean-up: the store is a file no path names from the moment it is opened
    # (once its 8 MiB of cache are full: 12,000 cases of 1 KB compressed)
    path = streamed_har(tmp_path / "many.har", walked_cases(12_000, 2000, drawn=True))
    folder = tmp_path / "tmp"
    folder.mkdir()
    child = started_import(path, tmp_path / "data.json", folder)
    try:
        wait_until(lambda: holds_open_in(child.pid, folder), child)
        child.kill()
    finally:
        child.wait(timeout=60)
    assert list(folder.iterdir()) == []


def test_a_stopped_import_removes_every_temporary_file_on_its_way_out(tmp_path: Path) -> None:
    # SIGTERM while the data file is written: the store, the part written and the rules' check
    path = streamed_har(tmp_path / "many.har", walked_cases(12_000, 2000, drawn=True))
    folder = tmp_path / "tmp"
    folder.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    child = started_import(path, out / "data.json", folder)
    try:
        wait_until(lambda: any(out.iterdir()), child)
        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=60)
    finally:
        child.kill()
    assert code == INTERRUPTED
    assert list(folder.iterdir()) == [] and list(out.iterdir()) == []


@pytest.mark.parametrize("output", ["data.json", "data.yaml"])
def test_line_separators_inside_a_recorded_string_are_kept_as_they_are(
    tmp_path: Path, output: str
) -> None:
    said = "one\u2028two\u2029three\x85four"
    recorded = case(
        "case-good",
        "2026-10-05T12:00:00Z",
        expect={"answer": {"verdict": "wrong", "shouldSay": said}},
    )
    path = har(tmp_path / "staging.har", [entry(list_url(AGENT, PROJECT), 200, page([recorded]))])
    out = tmp_path / output
    assert main(["fixtures", "import", "--har", str(path), "-o", str(out)]) == 0
    data = load_data([out], World(generated=False))
    assert [c["expect"] for listed in data.lists for c in listed.cases] == [recorded["expect"]]
