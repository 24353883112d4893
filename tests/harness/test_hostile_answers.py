"""A service the audit does not trust: every answer it sends is read within the audit's limits. A
decompression bomb, an oversized or endless body, a slow drip (of the body or the header block),
JSON nested too deep or of too many values, a body of millions of keys and a header flood each
leave a named gap (the audit INCOMPLETE), never a crash, and the audit's memory stays small;
Schemathesis's own requests and `--har` alike. Each attack is made on the fly, small on the wire."""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import os
import resource
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.cli import main
from evalmock.exits import INCOMPLETE
from evalmock.harness.checks.exchange import Exchange
from evalmock.harness.run.answer_deadline import held_to_deadlines
from evalmock.harness.run.answer_limits import AnswerLimits, read_httpx
from evalmock.harness.run.bounded_requests import bounded_session

from .serving import serving
from .test_har import entry as har_entry
from .test_har import write_har

MiB = 2**20
PEAK_RSS = 500 * MiB  # the most the audit's process may hold
# the audit's process is held to this: a defence removed fails the test, not the machine
ADDRESS_SPACE = 3 * 2**30
AUDIT_TIMEOUT = 120.0  # seconds: no attack keeps an audit running longer

Body = Callable[[], AsyncIterator[bytes]]


def hostile(body: Body, headers: list[tuple[bytes, bytes]] | None = None, status: int = 200) -> Any:
    """An ASGI app answering every request, the audit's first (is it reachable?) too, with `headers`
    and `body`: `status` to the scenario check's request for an unknown agent, 200 to the others. A
    body stops when its reader goes."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        try:
            start = [(b"content-type", b"application/json"), *(headers or [])]
            answered = status if UNKNOWN_AGENT in scope["path"] else 200
            await send({"type": "http.response.start", "status": answered, "headers": start})
            async for chunk in body():
                if gone.is_set():
                    return
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            watcher.cancel()

    return app


# The audit's own peak: VmHWM, of this process's memory since its exec. Not ru_maxrss, which counts
# the pytest process it was forked from too (Linux keeps the larger of the two across exec).
AUDIT = """
import dataclasses, json, re, sys
from evalmock.harness.run.engine import run_audit
from evalmock.harness.run.options import plan_audit
from evalmock.harness.run.preflight import check_target

options = json.loads(sys.argv[2])
only, phases = options.pop("only"), options.pop("phases")
audit = plan_audit(sys.argv[1], apis=("test-set",), **options)
audit = dataclasses.replace(audit, only=frozenset(only), phases=tuple(phases))
check_target(audit)
results = run_audit(audit)
print(json.dumps({
    "exit": results.verdict.exit_code,
    "gaps": [gap.what + " | " + gap.remedy for gap in results.gaps],
    "peak": int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024,
}))
"""


TARGETS = """
[[test_set.projects]]
agent_id = "acme.drafting"
project_id = "a60767bc-f81b-4009-86cc-372b632c4c53"
"""


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("hostile") / "targets.toml"
    path.write_text(TARGETS, encoding="utf-8")
    return str(path)


def audit_in_a_process(
    base_url: str,
    targets: str,
    *,
    environ: dict[str, str] | None = None,
    timeout: float = AUDIT_TIMEOUT,
    **options: Any,
) -> tuple[dict[str, Any], float]:
    """Audit `base_url`'s test-set API in a process of its own, held to ADDRESS_SPACE (one scenario
    check and no Schemathesis, with a token of its own, unless `options` say; `environ` added to
    its environment): what it reports (its verdict's exit code, its gaps, its own peak resident
    memory in bytes) and the seconds it took. No traceback: it ends well."""
    chosen = {"only": [ONE_REQUEST], "phases": [], "fuzz": False, "token": "hostile-test-token"}
    options = {**chosen, "targets": targets, **options}
    hypothesis_tables_built()
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", AUDIT, base_url, json.dumps(options)],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(environ or {})},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE,) * 2),
        check=False,
    )
    said = run.stderr.decode("utf-8", "replace")
    assert run.returncode == 0, said[-3000:]
    assert "Traceback" not in said, said[-5000:]
    return json.loads(run.stdout), time.monotonic() - started


@functools.cache
def hypothesis_tables_built() -> None:
    """Hypothesis builds its Unicode tables once per storage folder (the clone's `.hypothesis/`),
    at about 180 MiB more than an audit holds: built before the first audit whose memory is
    measured, so that a fresh clone measures the audit and not that one-time build (the image
    carries the tables, built at its build)."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from hypothesis.internal import charmap; "
            "charmap.charmap(); charmap.intervals_from_codec('utf-8')",
        ],
        check=True,
        timeout=AUDIT_TIMEOUT,
    )


ONE_REQUEST = "unknown_agent_is_agent_not_found"  # a scenario check of one request, for:
UNKNOWN_AGENT = "evalmock.no-such-agent"


def assert_a_gap_of_the_limit(report: dict[str, Any], *words: str) -> None:
    """The audit is INCOMPLETE with a gap whose text says each of `words`, its memory small."""
    assert report["exit"] == INCOMPLETE, report
    assert any(all(word in gap for word in words) for gap in report["gaps"]), report["gaps"]
    assert report["peak"] < PEAK_RSS, report["peak"]


@functools.cache
def gzip_bomb(layers: int) -> bytes:
    """1 GiB of zeros in one gzip member, about 1 MB, gzipped again `layers` - 1 times (the second
    layer takes it to a few KB). Each MiB is compressed alike once its dictionary is reset (a full
    flush), so one MiB's bytes are repeated, and the trailer's checksum and size are the whole's."""
    block = bytes(MiB)
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)  # the gzip header, then 1 MiB
    again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    last_block = packer.flush()[:-8]  # without the trailer of 2 MiB
    checksum = 0
    for _ in range(1024):
        checksum = zlib.crc32(block, checksum)
    bomb = first + again * 1023 + last_block + struct.pack("<II", checksum, 2**30)
    for _ in range(layers - 1):
        bomb = gzip.compress(bomb, 9)
    return bomb


def sent_whole(data: bytes, chunk: int = 64 * 2**10) -> Body:
    async def body() -> AsyncIterator[bytes]:
        for start in range(0, len(data), chunk):
            yield data[start : start + chunk]
            await asyncio.sleep(0)

    return body


def test_a_gzip_bomb_is_cut_at_the_size_limit_as_it_inflates(targets: str) -> None:
    app = hostile(sent_whole(gzip_bomb(1)), [(b"content-encoding", b"gzip")])
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its body passed 16 MiB decoded", "--max-answer-bytes")


def test_stacked_gzip_is_cut_at_the_size_limit_layer_by_layer(targets: str) -> None:
    # a few KB on the wire, 1 GiB once both layers are inflated
    app = hostile(sent_whole(gzip_bomb(2)), [(b"content-encoding", b"gzip, gzip")])
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its body passed 16 MiB decoded", "--max-answer-bytes")


def repeated(chunk: bytes, most: int, pause: float = 0.0) -> Body:
    """`chunk` sent `most` times at most (the test's own bound), `pause` seconds apart."""

    async def body() -> AsyncIterator[bytes]:
        for _ in range(most):
            yield chunk
            await asyncio.sleep(pause)

    return body


def test_an_oversized_body_is_cut_at_the_size_limit(targets: str) -> None:
    size = 2 * 2**30  # 2 GiB announced and sent, 1 MiB at a time
    app = hostile(repeated(b" " * MiB, size // MiB), [(b"content-length", str(size).encode())])
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its body passed 16 MiB", "--max-answer-bytes")


def test_an_endless_chunked_body_is_cut_at_the_size_limit(targets: str) -> None:
    app = hostile(repeated(b"[" * 64 * 2**10, 2**16))  # no length: 4 GiB before the test stops it
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its body passed 16 MiB", "--max-answer-bytes")


def test_a_slow_drip_is_cut_at_the_answers_deadline(targets: str) -> None:
    # a byte every quarter second: each read is quick, the answer never ends (10 minutes at most)
    app = hostile(repeated(b" ", 2400, pause=0.25))
    with serving(app) as base_url:
        report, took = audit_in_a_process(base_url, targets, request_timeout=2)
    assert_a_gap_of_the_limit(report, "was not over within 2 s", "--request-timeout")
    # four answers (three before the audit, one of the check's), each cut at about 2 s
    assert took < 60


HEADER_DRIP_PAUSE = 0.2  # seconds between two bytes of the header block
HEADER_DRIP_BYTES = 300  # the most dripped on one connection: a minute at most
DRIPPER_LIFETIME = 90.0  # seconds: the dripping service stops by itself after this
# One head dripped whole: an audit that read one to its end took at least this. Its bound, not a few
# deadlines' worth, is what the tests hold an audit to, so that a busy machine never fails them.
ONE_HEAD_DRIPPED = HEADER_DRIP_BYTES * HEADER_DRIP_PAUSE


async def drip_a_header_block(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, heard: list[bytes] | None = None
) -> None:
    """To each request on the connection (its request line kept in `heard`): its status line at
    once, then its header lines a byte every HEADER_DRIP_PAUSE, each read quick and the head not
    over for a minute."""
    try:
        while request := await reader.readuntil(b"\r\n\r\n"):
            if heard is not None:
                heard.append(request.split(b"\r\n", 1)[0])
            writer.write(b"HTTP/1.1 200 OK\r\n")
            head = b"content-type: application/json\r\nx-drip: " + b"d" * HEADER_DRIP_BYTES
            for byte in range(len(head)):
                writer.write(head[byte : byte + 1])
                await writer.drain()
                await asyncio.sleep(HEADER_DRIP_PAUSE)
            writer.write(b"\r\ncontent-length: 2\r\n\r\n{}")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the reader went
    finally:
        writer.close()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]


@contextmanager
def raw_service(handle: Handler) -> Iterator[str]:
    """The base URL of a service on 127.0.0.1 whose connections `handle` answers byte by byte; it
    stops on exit, or by itself after DRIPPER_LIFETIME."""
    started, done = threading.Event(), threading.Event()
    port: list[int] = []

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port.append(server.sockets[0].getsockname()[1])
        started.set()
        async with server:
            until = time.monotonic() + DRIPPER_LIFETIME
            while not done.is_set() and time.monotonic() < until:
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10), "the service did not start"
    try:
        yield f"http://127.0.0.1:{port[0]}"
    finally:
        done.set()
        thread.join(timeout=10)


def dripping_headers() -> Any:
    """A service that drips every answer's header block."""
    return raw_service(drip_a_header_block)


def test_a_header_block_dripped_is_cut_at_the_answers_deadline(targets: str) -> None:
    with dripping_headers() as base_url:
        report, took = audit_in_a_process(base_url, targets, request_timeout=2)
    assert_a_gap_of_the_limit(report, "was not over within 2 s", "--request-timeout")
    # four answers (three before the audit, one of the check's), each cut at about 2 s
    assert took < ONE_HEAD_DRIPPED


def test_schemathesis_cuts_a_header_block_dripped_at_the_deadline(targets: str) -> None:
    with dripping_headers() as base_url:
        report, took = audit_in_a_process(
            base_url,
            targets,
            request_timeout=2,
            only=[],
            fuzz=True,
            phases=["examples"],
            max_examples=1,
        )
    assert_a_gap_of_the_limit(
        report, "Schemathesis could not test the operation", "was not over within 2 s"
    )
    assert took < ONE_HEAD_DRIPPED


ONE_FUZZED_EXAMPLE: dict[str, Any] = {
    "only": [],
    "fuzz": True,
    "phases": ["examples"],
    "max_examples": 1,
}


@pytest.mark.parametrize(
    "reader", [{}, ONE_FUZZED_EXAMPLE], ids=["scenario-check-httpx", "schemathesis-requests"]
)
def test_an_audit_behind_the_environments_proxy_goes_through_it_and_keeps_the_deadline(
    targets: str, reader: dict[str, Any]
) -> None:
    """HTTP_PROXY is honoured as before, and the deadline holds through it: the proxy here is the
    hostile party, dripping every head. The audited host does not resolve (.invalid), so an audit
    that went around the proxy would end unreachable, not with the deadline's gap."""
    asked: list[bytes] = []
    with raw_service(functools.partial(drip_a_header_block, heard=asked)) as proxy:
        environ = {key: "" for key in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy")}
        environ |= {"HTTP_PROXY": proxy, "http_proxy": proxy}
        report, took = audit_in_a_process(
            "http://audited.invalid:8080", targets, environ=environ, request_timeout=2, **reader
        )
    assert_a_gap_of_the_limit(report, "was not over within 2 s", "--request-timeout")
    assert asked, "the proxy was never asked"
    assert all(line.startswith(b"GET http://audited.invalid:8080/") for line in asked), asked
    assert took < ONE_HEAD_DRIPPED


def test_answers_read_by_their_deadline_keep_their_connection_alive() -> None:
    """The deadline's reads leave keep-alive as it was: three answers on one connection, with
    httpx and with requests alike."""
    connections: list[int] = []

    async def answer_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            for _ in range(10):  # the test's own bound
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    limits = AnswerLimits(seconds=2)
    with raw_service(answer_at_once) as base_url:
        with held_to_deadlines(httpx.Client(timeout=5)) as client:
            bodies = [read_httpx(client, client.build_request("GET", base_url), limits)[1]]
            bodies += [read_httpx(client, client.build_request("GET", base_url), limits)[1]]
            bodies += [read_httpx(client, client.build_request("GET", base_url), limits)[1]]
        assert (bodies, len(connections)) == ([b"{}"] * 3, 1)
        with bounded_session(limits) as session:
            bodies = [session.get(base_url, timeout=5).content for _ in range(3)]
        assert (bodies, len(connections)) == ([b"{}"] * 3, 2)


def test_json_nested_too_deep_is_not_read_and_leaves_a_gap(targets: str) -> None:
    # 2.2 KB; to the check a 404, as it expects: only the body is left to judge
    app = hostile(sent_whole(b"[" * 1100 + b"]" * 1100), status=404)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "not read: its JSON is nested deeper than 254 levels")


def test_json_nested_past_the_bound_is_not_read_though_a_parser_would(targets: str) -> None:
    # 500 levels: orjson reads them, the recursive walks of a body (the redactor's) would not
    deep = b'{"a":' * 500 + b"1" + b"}" * 500
    app = hostile(sent_whole(deep), status=404)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "not read: its JSON is nested deeper than 254 levels")


def test_schemathesis_never_parses_json_nested_too_deep(targets: str) -> None:
    """Schemathesis parses with the standard parser, in a thread whose recursion error would end
    its run: such an answer is refused before it reaches Schemathesis."""
    app = hostile(sent_whole(b"[" * 1100 + b"]" * 1100), status=404)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(
            base_url, targets, only=[], fuzz=True, phases=["examples"], max_examples=1
        )
    assert_a_gap_of_the_limit(
        report,
        "Schemathesis could not test the operation",
        "got an answer that was not read: its JSON is nested deeper than 254",
    )


def many_keys(count: int) -> Body:
    """One JSON object of `count` keys, made as it is sent (10 million: 129 MB)."""

    async def body() -> AsyncIterator[bytes]:
        yield b"{"
        for start in range(0, count, 10_000):
            keys = range(start, min(start + 10_000, count))
            yield b"".join(b'"k%d":0,' % key for key in keys)
            await asyncio.sleep(0)
        yield b'"end":0}'

    return body


def test_a_body_of_millions_of_keys_is_cut_at_the_size_limit(targets: str) -> None:
    app = hostile(many_keys(10_000_000))
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its body passed 16 MiB", "--max-answer-bytes")


def test_json_of_too_many_values_is_not_read_by_our_checks_or_schemathesis(targets: str) -> None:
    # 150,000 keys, 2 MB: within the size limit, more than the audit reads
    app = hostile(many_keys(150_000), status=404)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(
            base_url, targets, fuzz=True, phases=["examples"], max_examples=1
        )
    too_many = "its JSON holds more than 100,000 values"
    assert_a_gap_of_the_limit(report, "answered 404 and was not read: " + too_many)
    assert_a_gap_of_the_limit(report, "Schemathesis could not test the operation", too_many)


def test_a_header_flood_is_refused(targets: str) -> None:
    flood = [(b"x-flood-%d" % number, b"1") for number in range(200)]  # 200 fields, 3 KB
    app = hostile(sent_whole(b"{}"), flood)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(base_url, targets)
    assert_a_gap_of_the_limit(report, "its header block has more than 100 fields")


def test_schemathesis_reads_its_own_answers_within_the_limits(targets: str) -> None:
    """Schemathesis's requests (its probes, its examples) meet the same bomb: cut as ours are."""
    app = hostile(sent_whole(gzip_bomb(1)), [(b"content-encoding", b"gzip")])
    with serving(app) as base_url:
        report, _ = audit_in_a_process(
            base_url, targets, only=[], fuzz=True, phases=["examples"], max_examples=1
        )
    assert_a_gap_of_the_limit(
        report, "Schemathesis could not test the operation", "its body passed 16 MiB decoded"
    )


def test_schemathesis_refuses_an_oversized_header_block(targets: str) -> None:
    big = [(b"x-big-%d" % number, b"v" * 4000) for number in range(5)]  # 20 KB in 5 fields
    app = hostile(sent_whole(b"{}"), big)
    with serving(app) as base_url:
        report, _ = audit_in_a_process(
            base_url, targets, only=[], fuzz=True, phases=["examples"], max_examples=1
        )
    assert_a_gap_of_the_limit(report, "its header block passed 16384 bytes")


def har_of(body: str, *, base64_body: bool = False, status: int = 200) -> dict[str, Any]:
    """A HAR entry of the test-set operation, its response body `body` as the file stores it."""
    exchange = Exchange(
        "GET",
        "http://127.0.0.1:8080/v1/agents/acme.drafting/test-set/cases?projectId=p",
        status,
        {"content-type": "application/json"},
    )
    recorded = har_entry(exchange)
    content = recorded["response"]["content"]
    content["text"] = body
    if base64_body:
        content["encoding"] = "base64"
    return recorded


def test_a_har_body_over_the_limit_is_never_decoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4,000 characters that are not base64: decoding them would be a usage error (exit 2)
    har = write_har(tmp_path / "big.har", [har_of("!" * 4000, base64_body=True)])
    code = main(["contract", "--har", str(har), "--quiet", "--max-answer-bytes", "1000"])
    out = capsys.readouterr().out
    assert code == INCOMPLETE
    assert "(entry 1) answered 200 and was not read: its body passed 1000 bytes" in out


def test_json_nested_too_deep_in_a_har_leaves_a_gap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    har = write_har(tmp_path / "deep.har", [har_of("[" * 1100 + "]" * 1100)])
    assert main(["contract", "--har", str(har), "--quiet"]) == INCOMPLETE
    out = capsys.readouterr().out
    assert "not read: its JSON is nested deeper than 254 levels" in out
    assert "Traceback" not in out


def test_max_answer_bytes_sets_the_live_audits_limit(
    targets: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = hostile(sent_whole(b"{}" + b" " * 2000), status=404)  # 2 KB, under the default
    with serving(app) as base_url:
        options = ["contract", "--base-url", base_url, "--targets", targets, "--api", "test-set"]
        code = main([*options, "--no-fuzz", "--quiet", "--max-answer-bytes", "1000"])
    out = capsys.readouterr().out
    assert code == INCOMPLETE
    assert "was not read: its body passed 1000 bytes on the wire" in out
    assert "--max-answer-bytes N to raise it" in out


def test_max_answer_bytes_below_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["contract", "--base-url", "http://127.0.0.1:9", "--max-answer-bytes", "0"])
    assert exited.value.code == 2
    assert "--max-answer-bytes: must be at least 1" in capsys.readouterr().err
