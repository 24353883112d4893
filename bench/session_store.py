"""What the Redis session store costs a request, and that a Redis gone holds up no other request.

    .venv/bin/python bench/session_store.py            # needs redis-server (Debian's package)
    .venv/bin/python bench/session_store.py --requests 5000

In process (the ASGI app called through httpx's ASGI transport, no sockets to the mock), against a
redis-server this script starts on 127.0.0.1 at a free port and stops at the end:

1. microseconds per request, sequential, for a request without a session token (the default
   world), a session's request over the in-process store, and over Redis on loopback;
2. with Redis paused (SIGSTOP: it answers nothing), `--stalled` session requests at once, each
   waiting out the store's bound, while default-world requests are timed beside them: the event
   loop is free if those answer in their usual time, not after the store's timeout.

Prints one JSON object. Every process it starts is stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from typing import Any

import httpx

from evalmock.server.app import create_app
from evalmock.server.sessions.memory import MemoryStore
from evalmock.server.sessions.store_choice import open_store
from evalmock.server.settings import ServerSettings

CASES = "/v1/agents/example/test-set/cases"
QUERY = {"projectId": "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", "limit": 25}
DEMO = {"Authorization": "Bearer demo-user"}
READY_S = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(folder: str) -> tuple[subprocess.Popen[bytes], int]:
    found = shutil.which("redis-server")
    if found is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [found, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not start")


async def per_request_us(client: httpx.AsyncClient, headers: dict[str, str], count: int) -> float:
    for _ in range(50):  # warm-up: the session's world, the case cache, Redis's scripts
        await client.get(CASES, params=QUERY, headers=headers)
    started = time.perf_counter()
    for _ in range(count):
        answer = await client.get(CASES, params=QUERY, headers=headers)
        assert answer.status_code == 200, answer.text
    return (time.perf_counter() - started) / count * 1e6


async def session(client: httpx.AsyncClient) -> dict[str, str]:
    created = await client.post("/__evalmock/sessions", json={})
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


def client_of(store: Any) -> httpx.AsyncClient:
    app = create_app(ServerSettings(), store=store)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://mock")


async def measure(port: int, requests: int, stalled: int, redis: subprocess.Popen[bytes]) -> dict:
    url = f"redis://127.0.0.1:{port}/0"
    results: dict[str, Any] = {"requests": requests}
    async with client_of(MemoryStore()) as memory:
        results["default_world_us"] = round(await per_request_us(memory, DEMO, requests), 1)
        results["session_memory_us"] = round(
            await per_request_us(memory, await session(memory), requests), 1
        )
    async with client_of(open_store(url)) as shared:
        token = await session(shared)
        results["session_redis_us"] = round(await per_request_us(shared, token, requests), 1)

        async def timed(headers: dict[str, str]) -> tuple[int, float]:
            started = time.perf_counter()
            answer = await shared.get(CASES, params=QUERY, headers=headers)
            return answer.status_code, (time.perf_counter() - started) * 1000

        redis.send_signal(signal.SIGSTOP)
        try:
            stuck = [asyncio.create_task(timed(token)) for _ in range(stalled)]
            await asyncio.sleep(0.05)  # every stalled request is now waiting on Redis
            beside = [await timed(DEMO) for _ in range(20)]
            waited = await asyncio.gather(*stuck)
        finally:
            redis.send_signal(signal.SIGCONT)
        results["redis_paused"] = {
            "stalled_session_requests": stalled,
            "their_statuses": sorted({status for status, _ in waited}),
            "their_max_ms": round(max(ms for _, ms in waited), 1),
            "default_world_beside_p50_ms": round(statistics.median(ms for _, ms in beside), 2),
            "default_world_beside_max_ms": round(max(ms for _, ms in beside), 2),
            "default_world_statuses": sorted({status for status, _ in beside}),
        }
        results["after_redis_is_back"] = (await timed(token))[0]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--stalled", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalmock-bench-redis-") as folder:
        redis, port = start_redis(folder)
        try:
            results = asyncio.run(measure(port, args.requests, args.stalled, redis))
            print(json.dumps(results, indent=2))
        finally:
            redis.send_signal(signal.SIGCONT)
            redis.terminate()
            redis.wait(timeout=10)


if __name__ == "__main__":
    main()
