"""The answers to Schemathesis's own requests meet the same limits as the scenario checks': a
service that answers most requests well (our mock) and attacks a few of Schemathesis's answers (a
bomb, an oversized or endless body, a drip, JSON too deep or too large, a 1 MB nextCursor) leaves a
named gap (the audit INCOMPLETE, never CONFORMS), whichever phase sent the request, and the audit's
memory stays flat however many answers are cut (measured in the audit's own process). A service's
cursor longer than 8 KiB is never sent back; an answer queued unasked on a kept connection is never
read as the next request's answer."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.contract.targets import dump_targets
from evalmock.exits import INCOMPLETE
from evalmock.harness.checks.registry import scenario_checks
from evalmock.harness.run.answer_deadline import held_to_deadlines
from evalmock.harness.run.answer_limits import MAX_SENT_VALUE, AnswerLimits
from evalmock.harness.run.bounded_requests import CutAnswers, bounded_session
from evalmock.harness.run.transport import HttpSender
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World

from .serving import serving
from .test_hostile_answers import (
    audit_in_a_process,
    gzip_bomb,
    many_keys,
    raw_service,
    repeated,
)
from .test_hostile_answers import sent_whole as whole

MiB = 2**20
PEAK_RSS = 300 * MiB  # the most the audit's process may hold, whatever is cut
AUDIT_TIMEOUT = 240.0  # seconds: no attack keeps an audit running longer
CASES = 60  # per project of the mock behind the attacks: a few pages each


class Attacker:
    """An ASGI app: our mock, behind which every `every`-th request Schemathesis sends (by its
    User-Agent; every request of the audit's if `everyone`) is answered by `attack` instead, `most`
    times at most; the longest request target it was sent is kept, and the most attacks it was
    sending at once."""

    def __init__(
        self, app: Any, attack: Any, every: int = 1, most: int = 10**6, everyone: bool = False
    ) -> None:
        self.app, self.attack, self.every, self.most = app, attack, every, most
        self.everyone = everyone
        self.seen = self.attacked = self.longest_target = 0
        self.sending = self.most_at_once = 0
        self.base_url = ""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        target = len(scope["raw_path"]) + len(scope["query_string"]) + 1
        self.longest_target = max(self.longest_target, target)
        agent = dict(scope["headers"]).get(b"user-agent", b"").lower()
        if self.everyone or b"schemathesis" in agent:
            self.seen += 1
            if self.seen % self.every == 0 and self.attacked < self.most:
                self.attacked += 1
                self.sending += 1
                self.most_at_once = max(self.most_at_once, self.sending)
                try:
                    return await self.attack(scope, receive, send)
                finally:
                    self.sending -= 1
        return await self.app(scope, receive, send)


def answering(headers: list[tuple[bytes, bytes]], chunks: Any) -> Any:
    """An ASGI attack: a 200 with `headers` (JSON's content type first), its body `chunks()` (an
    async iterator), stopped when the reader goes."""

    async def attack(scope: dict[str, Any], receive: Any, send: Any) -> None:
        start = [(b"content-type", b"application/json"), *headers]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        try:
            async for chunk in chunks():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except OSError:
            pass  # the reader went

    return attack


@dataclasses.dataclass(frozen=True)
class Mock:
    app: Any
    targets: str


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Mock:
    world = World(seed=42, cases=CASES)
    path = tmp_path_factory.mktemp("hostile-schemathesis") / "targets.toml"
    targets = dataclasses.replace(targets_for(world), sealed_cursors=True)
    dump_targets(targets, path)
    return Mock(create_app(ServerSettings(cases=CASES), world=world), str(path))


@contextmanager
def attacked(
    mock: Mock, attack: Any, every: int = 1, most: int = 10**6, everyone: bool = False
) -> Iterator[Attacker]:
    attacker = Attacker(mock.app, attack, every, most, everyone)
    with serving(attacker) as base_url:
        attacker.base_url = base_url
        yield attacker


def audit(
    attacker: Attacker, mock: Mock, timeout: float = AUDIT_TIMEOUT, **options: Any
) -> tuple[dict[str, Any], float]:
    """Audit the attacked mock's test-set API in a process of its own, held to ADDRESS_SPACE
    (Schemathesis only, unless `options` say): its verdict's exit code, its gaps and its own peak
    resident memory, and the seconds it took. It ends well: no traceback."""
    phases = ["examples", "coverage", "stateful"]
    chosen = {"only": [], "phases": phases, "max_examples": 5, "fuzz": True}
    # the targets' own token: Schemathesis's requests are the mock's to answer
    return audit_in_a_process(
        attacker.base_url, mock.targets, timeout=timeout, **{**chosen, "token": None, **options}
    )


def assert_named(report: dict[str, Any], *words: str) -> None:
    """INCOMPLETE, with a gap about Schemathesis's requests that says each of `words`, the audit's
    memory flat."""
    assert report["exit"] == INCOMPLETE, report
    named = [gap for gap in report["gaps"] if "Schemathesis could not test the operation" in gap]
    assert any(all(word in gap for word in words) for gap in named), report["gaps"]
    assert report["peak"] < PEAK_RSS, report["peak"] / MiB


BOMB = [(b"content-encoding", b"gzip")]
CUT = "got an answer that was not read: its body passed 16 MiB"


def test_one_gzip_bomb_among_schemathesiss_answers_is_a_gap_not_a_pass(mock: Mock) -> None:
    """The 20th of Schemathesis's requests in its stateful phase (whose error Schemathesis drops
    when a replay does not meet it again: the audit CONFORMED) is answered by 1 GiB of zeros in a
    few MB."""
    with attacked(mock, answering(BOMB, whole(gzip_bomb(1))), every=20, most=1) as attacker:
        report, _ = audit(attacker, mock, phases=["stateful"])
    assert attacker.attacked == 1
    assert_named(report, "1 of its requests " + CUT + " decoded", "--max-answer-bytes")


def test_stacked_gzip_among_schemathesiss_answers_is_cut_layer_by_layer(mock: Mock) -> None:
    stacked = [(b"content-encoding", b"gzip, gzip")]
    with attacked(mock, answering(stacked, whole(gzip_bomb(2))), every=7, most=30) as attacker:
        report, _ = audit(attacker, mock)
    assert_named(report, CUT + " decoded")


def test_an_oversized_answer_to_schemathesis_is_cut_at_the_size_limit(mock: Mock) -> None:
    size = 2 * 2**30  # announced and sent, 1 MiB at a time
    length = [(b"content-length", str(size).encode())]
    with attacked(mock, answering(length, repeated(b" " * MiB, 2048)), every=9, most=15) as at:
        report, _ = audit(at, mock)
    assert_named(report, CUT)


def test_an_endless_answer_to_schemathesis_is_cut_at_the_size_limit(mock: Mock) -> None:
    with attacked(mock, answering([], repeated(b"[" * 2**16, 2**16)), every=9, most=15) as at:
        report, _ = audit(at, mock)
    assert_named(report, CUT)


def test_json_nested_too_deep_for_schemathesis_is_a_gap(mock: Mock) -> None:
    deep = whole(b"[" * 1100 + b"]" * 1100)
    with attacked(mock, answering([], deep), every=5, most=30) as attacker:
        report, _ = audit(attacker, mock)
    assert_named(report, "not read: its JSON is nested deeper than 254 levels")


def test_ten_million_keys_in_answers_to_schemathesis_are_cut_at_the_size_limit(mock: Mock) -> None:
    # 129 MB each, made as they are sent
    with attacked(mock, answering([], many_keys(10_000_000)), every=9, most=10) as attacker:
        report, _ = audit(attacker, mock)
    assert attacker.attacked == 10
    assert_named(report, "10 of its requests " + CUT)


def test_a_million_keys_within_the_size_limit_are_not_read_and_memory_stays_flat(
    mock: Mock,
) -> None:
    # 9 MB each, within 16 MiB: more values than the audit reads
    with attacked(mock, answering([], many_keys(1_000_000)), every=5, most=20) as attacker:
        report, _ = audit(attacker, mock)
    assert attacker.attacked == 20
    assert_named(report, "20 of its requests", "its JSON holds more than 100,000 values")


def test_every_answer_bombed_with_eight_workers_keeps_memory_flat(mock: Mock) -> None:
    with attacked(mock, answering(BOMB, whole(gzip_bomb(1)))) as attacker:
        report, _ = audit(attacker, mock, workers=8, phases=["coverage", "stateful"])
    assert attacker.attacked > 40
    assert_named(report, CUT + " decoded")


def test_every_answer_a_stacked_bomb_with_eight_workers_keeps_memory_flat(mock: Mock) -> None:
    # `Content-Encoding: gzip, gzip`, a few KB each: the audit peaked at 501 MiB
    stacked = [(b"content-encoding", b"gzip, gzip")]
    with attacked(mock, answering(stacked, whole(gzip_bomb(2)))) as attacker:
        report, _ = audit(attacker, mock, workers=8, phases=["coverage", "stateful"])
    assert attacker.attacked > 40
    assert_named(report, CUT + " decoded")


def late(body: Any, seconds: float) -> Any:
    """`body`, its first byte sent `seconds` after the head."""

    async def chunks() -> AsyncIterator[bytes]:
        await asyncio.sleep(seconds)
        async for chunk in body():
            yield chunk

    return chunks


def test_every_answer_a_stacked_bomb_with_sixty_four_workers_keeps_memory_flat(mock: Mock) -> None:
    """Every answer of the audit's, the scenario checks' too, a stacked bomb whose body starts
    half a second late: dozens of bodies read at once. The audit's memory grew with each (776 MiB
    at 64 workers), before the bodies being read shared one room whatever the workers."""
    stacked = [(b"content-encoding", b"gzip, gzip")]
    bomb = answering(stacked, late(whole(gzip_bomb(2)), 0.5))
    every_check = [check.name for check in scenario_checks("test-set")]
    with attacked(mock, bomb, everyone=True) as attacker:
        report, _ = audit(
            attacker,
            mock,
            workers=64,
            only=every_check,
            phases=["examples", "coverage", "fuzzing"],
        )
    assert attacker.most_at_once >= 20
    assert_named(report, CUT + " decoded")


def test_a_dripped_answer_to_schemathesis_is_cut_at_its_deadline(mock: Mock) -> None:
    # a byte a quarter second of a body of 2,400 bytes, its length announced (a read of more than
    # one byte waits for all of it, each byte within the timeout): ten such answers
    length = [(b"content-length", b"2400")]
    drip = answering(length, repeated(b" ", 2400, pause=0.25))
    with attacked(mock, drip, every=10, most=10) as attacker:
        # uncut, one answer alone would take 600 s: the audit's own 120 s bound is what fails then
        report, _ = audit(attacker, mock, request_timeout=2, timeout=120)
    assert attacker.attacked == 10
    assert_named(report, "10 of its requests", "was not over within 2 s", "--request-timeout")


def cursor_rewriter(app: Any, size: int) -> Any:
    """Our mock, each page's nextCursor made `size` characters long (the page read whole, its
    length said again)."""

    async def rewritten(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        start: dict[str, Any] = {}
        body = bytearray()

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            data = bytes(body)
            try:
                page = json.loads(data)
            except ValueError:
                page = None
            if isinstance(page, dict) and page.get("nextCursor"):
                data = json.dumps({**page, "nextCursor": "c" * size}).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(data)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": data})

        await app(scope, receive, capture)

    return rewritten


@pytest.mark.parametrize("size", [MiB, 70 * 2**10], ids=["1-MB", "over-64-KiB"])
def test_a_long_cursor_from_the_service_is_never_sent_back(mock: Mock, size: int) -> None:
    """Neither the scenario checks' walks nor Schemathesis's stateful links send a cursor over 8
    KiB: a gap each, never a huge URL, never a crash (httpx refuses URLs over 64 KiB)."""
    long_cursor = Mock(cursor_rewriter(mock.app, size), mock.targets)
    noop = answering([], whole(b"{}"))
    with attacked(long_cursor, noop, most=0) as attacker:
        report, _ = audit(attacker, long_cursor, only=["walk_yields_every_case_once"])
    assert attacker.longest_target < MAX_SENT_VALUE + 2048
    assert report["exit"] == INCOMPLETE, report
    cursor = f"its cursor= is {size:,} bytes, more than the 8 KiB the audit sends"
    assert any("was not sent: " + cursor in gap for gap in report["gaps"]), report["gaps"]
    sent_back = f"its nextCursor is {size:,} bytes, more than the 8 KiB the audit sends back"
    assert_named(report, sent_back, "8 KiB, the most the audit sends back")


async def answer_and_one_unasked(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """To each request on the connection, its answer (its number) and, in the same write, an answer
    nobody asked for (a 401): a response desync, if the next request on the connection read it."""
    try:
        for number in range(1, 11):  # the test's own bound
            await reader.readuntil(b"\r\n\r\n")
            asked = b'{"answer":%d}' % number
            unasked = b'{"unasked":%d}' % number
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s"
                % (len(asked), asked)
                + b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(unasked), unasked)
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def test_an_answer_queued_unasked_is_never_read_as_the_next_requests_answer() -> None:
    """Three requests on one client, with httpx (the scenario checks') and with requests
    (Schemathesis's): each gets a 200, none the unasked 401; the connections are ended on the
    unasked bytes, and each is counted."""
    limits = AnswerLimits(seconds=5)
    with raw_service(answer_and_one_unasked) as base_url:
        with held_to_deadlines(httpx.Client(base_url=base_url, timeout=5)) as client:
            sender = HttpSender(client, limits=limits)
            statuses = [sender("/cases", {}, {})[0].status for _ in range(3)]
        assert (statuses, sender.unasked) == ([200, 200, 200], 3)
        cuts = CutAnswers()
        with bounded_session(limits, cuts) as session:
            answers = [session.get(base_url + "/cases", timeout=5) for _ in range(3)]
        assert [answer.status_code for answer in answers] == [200, 200, 200]
        assert all(b"unasked" not in answer.content for answer in answers)
        assert cuts.take_unasked("/") == 3


def test_the_limit_on_values_sent_back_is_documented() -> None:
    hardening = (Path(__file__).parents[2] / "docs" / "hardening.md").read_text(encoding="utf-8")
    assert f"{MAX_SENT_VALUE // 2**10} KiB" in hardening
