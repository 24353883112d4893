"""`evalmock contract --har` holds what it judges, not the JSON it parses: a file of `{}` in its
log's comment, or of small entries of other operations, costs the audit no more memory than one of
a single entry; an entry of too many objects is refused, saying why. Each audit runs in a process of
its own, whose peak memory is its own (bench/har_memory.py measures 250 MiB files)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from child_peak import evalmock_peak
from evalmock.exits import INCOMPLETE
from evalmock.harness.traffic import har_stream
from evalmock.harness.traffic.har import read_har
from evalmock.harness.traffic.har_stream import MAX_CONTAINERS

from .builders import page
from .test_har import SERVICE, entry, write_har

MIB = 2**20
SIZE = 40 * MIB  # parsed whole, as the file used to be, its `{}` took 900 MiB; its entries 300 MiB
GROWTH = 40 * MIB  # the most the audit's peak may pass that of a file of one entry


def peak_and_said(har: Path, *options: str) -> tuple[int, int, str]:
    """`evalmock contract --har` in a child of its own: its exit code, peak RSS and what it said."""
    return evalmock_peak("contract", "--har", str(har), "--quiet", *options)


@pytest.fixture(scope="module")
def one_entry(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak of an audit of a file of one entry: what any audit costs."""
    har = write_har(tmp_path_factory.mktemp("one") / "one.har", [entry(page())])
    return peak_and_said(har)[1]


def streamed(path: Path, *pieces: Iterator[str] | str) -> Path:
    with open(path, "w") as file:
        for piece in pieces:
            file.writelines([piece] if isinstance(piece, str) else piece)
    return path


def braces(size: int) -> Iterator[str]:
    """A list of `{}`, `size` bytes of it."""
    yield "["
    block = "{}," * 10_000
    for _ in range(size // len(block)):
        yield block
    yield "{}]"


def small_entries(size: int, path: str) -> Iterator[str]:
    """Entries of a small page at `path` on the service, `size` bytes of them."""
    template = entry(page([]), url=f"{SERVICE}{path}")
    written, number = 0, 0
    while written < size:
        template["response"]["headers"] = [{"name": "x-request-id", "value": f"r-{number}"}]
        text = ("," if number else "") + json.dumps(template)
        written, number = written + len(text), number + 1
        yield text


LOG = '{"log": {"version": "1.2", "creator": {"name": "a browser", "version": "1"}, '


def test_a_log_comment_of_40_mib_of_braces_costs_no_memory(tmp_path: Path, one_entry: int) -> None:
    one = json.dumps(entry(page()))
    har = streamed(
        tmp_path / "braces.har", LOG + '"comment": ', braces(SIZE), f', "entries": [{one}]}}}}'
    )
    code, peak, said = peak_and_said(har)
    assert code not in (2, 70), said
    assert "traffic: 1 exchange, 1 judged" in said
    assert peak - one_entry < GROWTH, f"{peak / MIB:.0f} MiB, one entry {one_entry / MIB:.0f} MiB"


def test_40_mib_of_entries_of_other_operations_are_counted_not_kept(
    tmp_path: Path, one_entry: int
) -> None:
    other = "/v1/agents/acme.drafting/settings"
    har = streamed(tmp_path / "others.har", LOG + '"entries": [', small_entries(SIZE, other), "]}}")
    code, peak, said = peak_and_said(har)
    assert code not in (2, 70), said
    assert "0 judged" in said and "of other paths or methods" in said
    assert peak - one_entry < GROWTH, f"{peak / MIB:.0f} MiB, one entry {one_entry / MIB:.0f} MiB"


def test_entries_judged_are_kept_on_disk_until_sorted_not_in_memory(tmp_path: Path) -> None:
    # Kept packed in memory until all were read and sorted, 380,000 small pages took 310 MiB
    # (bench/har_memory.py); on disk, 4 times the entries cost 1 MiB more, in memory 20.
    path = "/v1/agents/acme.drafting/test-set/cases?projectId=p"
    peaks = []
    for size in (SIZE // 4, SIZE):
        har = streamed(
            tmp_path / f"{size}.har", LOG + '"entries": [', small_entries(size, path), "]}}"
        )
        code, peak, said = peak_and_said(har)
        assert code not in (2, 70), said
        assert re.search(r" [1-9]\d* exchanges, [1-9]\d* judged", said), said
        peaks.append(peak)
    small, large = peaks
    assert large - small < 10 * MIB, f"{small / MIB:.0f} MiB, then {large / MIB:.0f} MiB"


def test_an_entry_of_too_many_objects_is_refused_saying_why(tmp_path: Path) -> None:
    # Parsed whole, its 40 MiB of `{}` took 900 MiB before a byte of it was judged.
    har = streamed(tmp_path / "entry.har", LOG + '"entries": [{"comment": ', braces(SIZE), "}]}}")
    code, _, said = peak_and_said(har)
    assert code == 2
    assert f"holds more than {MAX_CONTAINERS:,} objects and arrays in one entry" in said


def test_entries_within_the_bound_are_read(tmp_path: Path) -> None:
    nested: dict[str, Any] = {**entry(page()), "comment": [{}] * (MAX_CONTAINERS // 2)}
    har = write_har(tmp_path / "within.har", [nested])
    code, _, said = peak_and_said(har)
    assert code not in (2, 70), said
    assert "traffic: 1 exchange, 1 judged" in said


@pytest.mark.parametrize("part", [1, 2, 3, 7, 64])
def test_the_measure_reads_strings_as_json_does_wherever_a_part_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: int
) -> None:
    # Brackets, quotes and backslashes inside strings are no structure, wherever a part of the file
    # measured ends: in an escape, between a backslash and what it escapes, after a run of them.
    monkeypatch.setattr(har_stream, "MEASURED_SIZE", part)
    tricky = ['{"a": [1]}', '\\"[{', "\\\\", '\\\\\\"{{', "[[[[", "\\u005b", "}]" * 10]
    entries = [{**entry(page()), "comment": text, "_note": [text, {"x": text}]} for text in tricky]
    har = write_har(tmp_path / "tricky.har", entries)
    with open(har, "rb") as file:
        guarded = har_stream.Guarded(file, 2**20)
        while guarded.read(2**20):
            pass
    assert (guarded.depth, guarded.in_string) == (0, False)
    assert [recorded.entry for recorded in read_har(har)] == entries


def test_brackets_inside_a_body_are_no_objects(tmp_path: Path) -> None:
    nested = entry(page())
    nested["response"]["content"]["text"] = "{[" * MAX_CONTAINERS
    har = write_har(tmp_path / "text.har", [nested])
    [recorded] = list(read_har(har))
    assert recorded.entry == nested


def test_bodies_full_of_escaped_quotes_are_measured_in_linear_time(tmp_path: Path) -> None:
    # A part that opens a string without closing it was searched again from each escaped quote in
    # it: 65 MiB of real pages took 86 s to measure, where parsing them takes 0.3 s.
    body = json.dumps([{"id": f"case-{n}", "kind": "hand", "ok": True} for n in range(800)])
    recorded = {**entry(page()), "comment": body}
    har = write_har(tmp_path / "escaped.har", [recorded] * 300)
    started = time.perf_counter()
    with open(har, "rb") as file:
        guarded = har_stream.Guarded(file, 2**30)
        while guarded.read(2**20):
            pass
    assert time.perf_counter() - started < 3.0


def test_a_body_of_40_mib_is_cut_as_it_is_parsed_never_held_and_is_a_gap(
    tmp_path: Path, one_entry: int
) -> None:
    # Held whole while it was parsed, a string took about twice its size: 80 MiB more than one
    # entry for this one (485 MiB for one of 200 MiB).
    recorded = entry(page())
    recorded["response"]["content"]["text"] = "@"
    head, tail = json.dumps(recorded).split('"@"')
    block = '{\\"id\\": \\"case-1\\"}, ' * 2**14
    body = (block for _ in range(SIZE // len(block)))
    har = streamed(
        tmp_path / "long.har", LOG + '"entries": [' + head + '"[', body, '"' + tail + "]}}"
    )
    code, peak, said = peak_and_said(har, "--max-answer-bytes", str(MIB))
    assert code == INCOMPLETE, said
    assert "(entry 1) answered 200 and was not read: its body passed 1 MiB" in said
    assert peak - one_entry < GROWTH / 2, (
        f"{peak / MIB:.0f} MiB, one entry {one_entry / MIB:.0f} MiB"
    )


def test_a_body_of_escapes_within_the_limit_but_past_the_strings_bound_is_a_gap_saying_so(
    tmp_path: Path,
) -> None:
    # 6 bytes of the file for each byte of the body: within 1 MiB of body, past 2 MiB of text
    recorded = entry(page())
    recorded["response"]["content"]["text"] = "\x01" * (MIB // 2)
    har = write_har(tmp_path / "escapes.har", [recorded])
    code, _, said = peak_and_said(har, "--max-answer-bytes", str(MIB))
    assert code == INCOMPLETE, said
    assert "was not read: its body's text passed 2 MiB in the HAR file" in said
