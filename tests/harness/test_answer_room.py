"""The room shared by the bodies the audit reads at once: a body past its first share waits for
room and holds it until it is read, cut or broken; the wait is the audit's, not charged to the
service's deadline; many readers through a small room never deadlock and never hold more than it.
A body's stacked codings are decoded as urllib3 decodes them, each layer holding no more than one
read."""

from __future__ import annotations

import gzip
import io
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator

import pytest
import urllib3

from evalmock.harness.run import answer_limits
from evalmock.harness.run.answer_deadline import reading_until
from evalmock.harness.run.answer_limits import (
    FIRST_SHARE,
    READ_SIZE,
    AnswerLimits,
    AnswerOverLimit,
    Budget,
    Room,
    decoded_body,
)

MiB = 2**20
WAIT = 0.3  # seconds another reader holds the room


class WatchedRoom(Room):
    """A room that remembers the most of it taken at once, and each amount taken."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.most = 0
        self.amounts: list[int] = []

    def take(self, amount: int) -> float:
        waited = super().take(amount)
        self.most = max(self.most, self.taken)
        self.amounts.append(amount)
        return waited


def sent(body: bytes, chunk: int = READ_SIZE) -> Iterator[bytes]:
    return (body[start : start + chunk] for start in range(0, len(body), chunk))


def given_back_after(room: Room, amount: int, seconds: float) -> threading.Thread:
    """`amount` of `room` taken now by another reader, and given back `seconds` later."""
    room.take(amount)
    thread = threading.Thread(target=lambda: (time.sleep(seconds), room.give_back(amount)))
    thread.start()
    return thread


def test_a_reader_waits_for_room_another_holds() -> None:
    room = Room(10)
    other = given_back_after(room, 6, WAIT)
    waited = room.take(6)
    other.join()
    assert waited >= WAIT * 0.9
    assert room.taken == 6


def test_a_body_larger_than_the_room_is_read_alone() -> None:
    room = Room(10)
    assert room.take(25) < WAIT  # nothing else holds any: taken at once
    other = threading.Thread(target=lambda: (time.sleep(WAIT), room.give_back(25)))
    other.start()
    assert room.take(1) >= WAIT * 0.9  # the next waits for it
    other.join()


def test_a_small_body_takes_no_room() -> None:
    room = WatchedRoom(MiB)
    with Budget(AnswerLimits(), time.monotonic(), room) as budget:
        assert decoded_body(sent(b"x" * FIRST_SHARE), None, budget) == b"x" * FIRST_SHARE
    assert room.amounts == []


def test_a_body_past_its_first_share_takes_the_rest_of_its_limit_once_and_gives_it_back() -> None:
    room = WatchedRoom(64 * MiB)
    body = bytes(range(256)) * (3 * MiB // 256)
    with Budget(AnswerLimits(max_bytes=4 * MiB), time.monotonic(), room) as budget:
        assert decoded_body(sent(gzip.compress(body)), "gzip", budget) == body
        assert room.taken == 4 * MiB - FIRST_SHARE
    assert room.amounts == [4 * MiB - FIRST_SHARE]
    assert room.taken == 0


def test_the_room_is_taken_once_right_past_the_first_share() -> None:
    """No wait can deadlock: a reader waits for room holding its first share and one read at
    most, and never waits again while it holds room."""
    room = WatchedRoom(MiB)
    taken_at = []
    with Budget(AnswerLimits(max_bytes=2 * MiB), time.monotonic(), room) as budget:
        for size in range(READ_SIZE, 2 * MiB, READ_SIZE):
            before = len(room.amounts)
            budget.hold(size)
            if len(room.amounts) > before:
                taken_at.append(size)
    assert taken_at == [FIRST_SHARE + READ_SIZE]
    assert room.taken == 0


def test_the_room_is_given_back_when_the_body_is_cut() -> None:
    room = Room(64 * MiB)
    bomb = gzip.compress(bytes(64 * MiB))
    with (
        pytest.raises(AnswerOverLimit, match="passed 16 MiB decoded"),
        Budget(AnswerLimits(), time.monotonic(), room) as budget,
    ):
        decoded_body(sent(bomb), "gzip", budget)
    assert room.taken == 0


def test_no_memory_for_a_body_is_a_cut_answer_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's memory (or the audit's ulimit) gone when a body passes its first share: the
    answer is cut and said, as any answer past a limit, and its room is given back."""

    def no_memory(*args: object) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(answer_limits.mmap, "mmap", no_memory)
    room = Room(64 * MiB)
    with (
        pytest.raises(AnswerOverLimit, match=r"could not hold its body past .*Cannot allocate"),
        Budget(AnswerLimits(), time.monotonic(), room) as budget,
    ):
        decoded_body(sent(bytes(2 * FIRST_SHARE)), None, budget)
    assert room.taken == 0


def test_the_room_is_given_back_when_reading_breaks() -> None:
    room = Room(64 * MiB)

    def broken() -> Iterator[bytes]:
        yield from sent(b"x" * 2 * FIRST_SHARE)
        raise ConnectionResetError("the service went")

    with (
        pytest.raises(Exception, match="the service went"),
        Budget(AnswerLimits(), time.monotonic(), room) as budget,
    ):
        decoded_body(broken(), None, budget)
    assert room.taken == 0


def test_the_wait_for_room_is_not_charged_to_the_answers_deadline() -> None:
    """An answer allowed 0.2 s, which waits 0.3 s for room another reader holds, is read whole:
    its budget's deadline and its reads' deadline move by the wait."""
    room = Room(2 * MiB)
    other = given_back_after(room, 2 * MiB, WAIT)
    started = time.monotonic()
    limits = AnswerLimits(max_bytes=MiB, seconds=0.2)
    with (
        reading_until(started + limits.seconds) as deadline,
        Budget(limits, started, room) as budget,
    ):
        body = decoded_body(sent(b"y" * (FIRST_SHARE + READ_SIZE)), None, budget)
    other.join()
    assert len(body) == FIRST_SHARE + READ_SIZE
    assert deadline.at >= started + limits.seconds + WAIT * 0.9


def test_an_answer_slow_on_its_own_is_still_cut_at_its_deadline() -> None:
    started = time.monotonic() - 1.0  # sent a second ago
    with (
        pytest.raises(AnswerOverLimit, match=r"not over within 0\.5 s"),
        Budget(AnswerLimits(seconds=0.5), started, Room(MiB)) as budget,
    ):
        decoded_body(sent(b"z" * 10), None, budget)


def test_many_readers_through_a_small_room_all_finish_and_never_hold_more_than_it() -> None:
    room = WatchedRoom(3 * MiB)
    limits = AnswerLimits(max_bytes=MiB + FIRST_SHARE)  # three at a time
    body = b"w" * MiB
    read: list[int] = []

    def reader() -> None:
        with Budget(limits, time.monotonic(), room) as budget:
            read.append(len(decoded_body(sent(body), None, budget)))

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(32)]
    for thread in threads:
        thread.start()
    done_by = time.monotonic() + 20  # seconds: a deadlock fails the test, not the run
    for thread in threads:
        thread.join(timeout=max(0.0, done_by - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads)
    assert read == [MiB] * 32
    assert 0 < room.most <= 3 * MiB
    assert room.taken == 0


def layered(body: bytes, codings: list[str]) -> bytes:
    for coding in codings:
        body = zlib.compress(body) if coding == "deflate" else gzip.compress(body)
    return body


@pytest.mark.parametrize(
    "header",
    ["gzip", "GZip", "x-gzip", "deflate", "gzip, gzip", "deflate,gzip", "gzip, deflate, gzip"],
)
def test_stacked_codings_decode_to_what_urllib3s_own_chain_gives(header: str) -> None:
    body = bytes(range(256)) * 4096
    wire = layered(body, [coding.strip().lower() for coding in header.split(",")])
    with Budget(AnswerLimits(), time.monotonic(), Room(MiB)) as budget:
        assert decoded_body(sent(wire), header, budget) == body


@pytest.mark.parametrize("header", [" gzip", "br2", "identity", "foo, bar"])
def test_a_coding_urllib3_does_not_decode_is_read_as_sent(header: str) -> None:
    wire = gzip.compress(b"as sent")
    with Budget(AnswerLimits(), time.monotonic(), Room(MiB)) as budget:
        assert decoded_body(sent(wire), header, budget) == wire


def urllib3s_error(wire: bytes, header: str) -> str:
    answer = urllib3.HTTPResponse(
        body=io.BytesIO(wire), headers={"content-encoding": header}, preload_content=False
    )
    with pytest.raises(urllib3.exceptions.DecodeError) as caught:
        answer.read()
    return str(caught.value)


@pytest.mark.parametrize(
    ("wire", "header"),
    [
        (b"not gzip at all", "gzip"),
        (gzip.compress(b"not gzip at all"), "gzip, gzip"),
        (gzip.compress(b"neither deflate"), "foo, gzip"),
        (b"", "gzip, gzip, gzip, gzip, gzip, gzip"),
    ],
    ids=["gzip", "inner-gzip", "unknown-as-deflate", "six-codings"],
)
def test_a_body_that_does_not_decode_is_refused_as_urllib3_refuses_it(
    wire: bytes, header: str
) -> None:
    with (
        pytest.raises(urllib3.exceptions.DecodeError) as caught,
        Budget(AnswerLimits(), time.monotonic(), Room(MiB)) as budget,
    ):
        decoded_body(sent(wire), header, budget)
    assert str(caught.value) == urllib3s_error(wire, header)


def long_inner_bomb() -> bytes:
    """`gzip, gzip` of a few tens of KB whose inner layer is 20 MB of deflate (20 GiB of zeros):
    urllib3's own chain hands the inner decoder all the outer one makes, 64 KiB a read."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = packer.compress(bytes(MiB)) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(bytes(MiB)) + packer.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(first + again * 20_000, 9)


def test_a_stacked_bomb_is_decoded_holding_one_read_a_layer() -> None:
    """Cut at 16 MiB decoded, the decoders held at most a few reads (the body itself is in its
    room's mapping, which tracemalloc does not see): urllib3's chain held 16 MiB more."""
    bomb = long_inner_bomb()
    tracemalloc.start()
    try:
        with (
            pytest.raises(AnswerOverLimit, match="passed 16 MiB decoded"),
            Budget(AnswerLimits(), time.monotonic(), Room(64 * MiB)) as budget,
        ):
            decoded_body(sent(bomb), "gzip, gzip", budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MiB, peak / MiB
