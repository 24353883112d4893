"""Where the proxy's time goes, without its own server: the judge of one page and the forwarder,
called in process.

    # CPU µs a judgement and a forwarded request
    .venv/bin/python bench/proxy_inprocess.py
    # and cProfile's top functions (judge or forward)
    .venv/bin/python bench/proxy_inprocess.py --cprofile judge

An `evalmock serve` upstream is started (pinned to CPU 1, this process to CPU 0, as taskset allows);
the example request (25 generated cases) is forwarded through the proxy's ASGI app with every check
on (`--strict --profile digitalocean-live --targets FILE`) and with nothing judged (`--api
gradient`), and its page is judged on its own. Each figure is the best of several batches of process
CPU time, which other work on a shared machine disturbs less than wall time; it explains the wrk
figures of `run.py --only proxy`, it does not replace them. "judge, caches cold" is the judge after
a few MiB were written (the time to write them taken off), as the judge runs inside the proxy: after
the forwarding and the upstream have had the CPU's caches. "judge, page unseen" is the judge of a
page it remembers nothing of (a walk over pages never asked for before): the page's body, cases and
URL forgotten first.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import lib

from evalmock.cli import build_parser
from evalmock.harness.checks import case_invariants, exchange
from evalmock.proxy.command import build_proxy
from evalmock.proxy.forwarded import Forwarded

PATH = "/v1/agents/example/test-set/cases"
QUERY = lib.EXAMPLE_QUERY.encode("ascii")
EVERY_CHECK = ["--strict", "--profile", "digitalocean-live", "--targets"]
# twice this machine's L2 (1 MiB a core), written between two cold judgements
EVICT_BYTES = 2 * 2**20


def proxy_for(upstream: str, options: list[str]) -> tuple[Any, Any, Any]:
    """The proxy's ASGI app, its forwarder and its session, as `evalmock proxy` builds them."""
    return build_proxy(
        build_parser().parse_args(["proxy", "--upstream", upstream, *options]), io.StringIO()
    )


async def forward_once(app: Any) -> None:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": QUERY,
        "headers": [
            (b"host", b"127.0.0.1:8081"),
            (b"authorization", f"Bearer {lib.TOKEN}".encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8081),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"the proxy answered {message['status']}")

    await app(scope, receive, send)


def forget_bodies(session: Any) -> None:
    """Forget what the judge remembers of the pages it saw (their bodies, cases and URLs)."""
    exchange._PLAIN_JSON.forget()
    case_invariants._case_keys.forget()
    case_invariants._kept.clear()
    for judge in session.audit.judges.values():
        judge.document._passed.forget()
        judge.document._cases.clear()


async def forget_bodies_async(session: Any) -> None:
    forget_bodies(session)


async def best_cpu_us(step: Callable[[], Awaitable[None]], batch: int, batches: int = 5) -> float:
    for _ in range(batch):  # warm: connections open, caches filled
        await step()
    best = float("inf")
    for _ in range(batches):
        started = time.process_time()
        for _ in range(batch):
            await step()
        best = min(best, (time.process_time() - started) / batch * 1e6)
    return round(best, 1)


async def main(args: argparse.Namespace) -> None:
    python = lib.evalmock_python(None)
    targets = lib.RESULTS / "proxy-targets.toml"
    server = lib.start_evalmock(
        python,
        "proxy-inprocess-upstream",
        extra=["--write-targets", str(targets)],
        cpu=lib.LOAD_CPU,
    )
    try:
        judged_app, judging, session = proxy_for(server.base, [*EVERY_CHECK, str(targets)])
        passed_app, passing, _ = proxy_for(server.base, ["--api", "gradient"])
        status, body = lib.get(server.example_url())
        assert status == 200, status
        url = server.example_url()

        async def judge() -> None:
            forwarded = Forwarded(
                datetime.now(UTC),
                "GET",
                url,
                "/v1" + lib.EXAMPLE_TEST_SET_PATH.split("?")[0],
                [("authorization", f"Bearer {lib.TOKEN}")],
                200,
                "OK",
                "HTTP/1.1",
                [("content-type", "application/json"), ("content-length", str(len(body)))],
                body,
                len(body),
            )
            session.judge("test-set", forwarded)

        evicted = bytearray(EVICT_BYTES)

        async def judge_cold() -> None:
            # What runs between two judgements inside the proxy (forwarding, uvicorn, the upstream
            # on the same CPU) evicts what the judge reads from the CPU's caches; writing a few MiB
            # does so here.
            for offset in range(0, EVICT_BYTES, 64):
                evicted[offset] ^= 1
            await judge()

        async def judge_unseen() -> None:
            # A page the proxy never saw: what it remembers of bodies, cases and URLs forgotten
            # first.
            forget_bodies(session)
            await judge()

        async def evicting() -> None:
            for offset in range(0, EVICT_BYTES, 64):
                evicted[offset] ^= 1

        steps = {
            "judge": judge,
            "forward": lambda: forward_once(passed_app),
            "forward-and-judge": lambda: forward_once(judged_app),
        }
        for name, step in steps.items():
            print(f"{name:18s} {await best_cpu_us(step, args.requests):8.1f} µs CPU")
        cold = await best_cpu_us(judge_cold, args.requests) - await best_cpu_us(
            evicting, args.requests
        )
        print(
            f"{'judge, caches cold':18s} {cold:8.1f} µs CPU (after {EVICT_BYTES // 2**20} MiB "
            "written)"
        )
        unseen = await best_cpu_us(judge_unseen, args.requests) - await best_cpu_us(
            lambda: forget_bodies_async(session), args.requests
        )
        print(f"{'judge, page unseen':18s} {unseen:8.1f} µs CPU (nothing of the page remembered)")
        if args.cprofile:
            step = steps["judge"] if args.cprofile == "judge" else steps["forward-and-judge"]
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.requests):
                await step()
            profiler.disable()
            stats = pstats.Stats(profiler)
            print(
                f"{sum(row[1] for row in stats.stats.values()) / args.requests:.0f} calls a request"
            )
            stats.sort_stats("tottime").print_stats(30)
        for forwarder in (judging, passing):
            await forwarder.aclose()
    finally:
        lib.stop(server.proc)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300, help="requests a batch (default 300)")
    parser.add_argument("--cprofile", choices=("judge", "forward"), help="profile one of them")
    arguments = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(lib.SERVER_CPU)})
    try:
        import uvloop
    except ImportError:
        asyncio.run(main(arguments))
    else:
        uvloop.run(main(arguments))
