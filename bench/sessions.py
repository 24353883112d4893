"""Sessions: what a request with a session token costs beside one without, what the hot path of a
request without one costs beside a baseline revision's, and the memory of 1,000 live default
sessions.

    .venv/bin/python bench/sessions.py                    # against `main` as the baseline
    .venv/bin/python bench/sessions.py --baseline 9b7e98c --rounds 7 --requests 5000
    .venv/bin/python bench/sessions.py --json             # one JSON object, as run.py records it
    .venv/bin/python bench/sessions.py --http             # and over HTTP, with wrk, under Granian
    .venv/bin/python bench/sessions.py --instructions     # instructions a request, under callgrind

In process (the ASGI app called directly, as inprocess.py does), timed by process CPU time. Each
round is a child process of its own, this revision's and the baseline's in turn, so that neither
runs on a warmer machine; the figures are the medians of the rounds, and each ratio is the median of
the per-round ratios. `demo` is the reference page with `Bearer demo-user`; `session` is the same
request with the token of a session of the default world (which shares the mock's world object, and
journals every request). Memory: the resident set and the Python heap (tracemalloc) that 1,000
sessions add, each created through the admin API and used for one request.

`--instructions` counts instead of timing, so that no other work on the machine disturbs it: each
kind runs twice under `valgrind --tool=callgrind`, with `--requests` requests after the warm-up and
with none; the difference, divided by `--requests`, is one request's instructions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import lib

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("demo", "session", "gradient-demo", "gradient-session")
SESSIONS = 1_000
TARGET_SESSION_RATIO = 1.10  # a request with a session token costs at most 10% more
TARGET_SESSIONS_MIB = 200  # 1,000 live default sessions fit in this


# -- in a child process: one round
# -------------------------------------------------------------------------


def _resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _new_session(app: Any, inprocess: Any) -> str:
    sent: list[dict[str, Any]] = []
    body = b"{}"

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = inprocess.scope_for(
        "/__evalmock/sessions",
        b"",
        [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    )
    scope["method"] = "POST"
    await app(scope, receive, send)
    answer = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
    return answer["token"]


async def _started(kinds: list[str]) -> tuple[Any, Any, asyncio.Task[None]]:
    """The bench script `inprocess` with each kind's request among its KINDS, the app, and its
    lifespan's task."""
    sys.path.insert(0, str(ROOT / "bench"))
    import inprocess  # this checkout's bench script, over whichever evalmock is imported

    from evalmock.server.app import create_app
    from evalmock.server.settings import ServerSettings

    app = create_app(ServerSettings())
    lifespan = await inprocess.start(app)
    page = inprocess.KINDS["page"]
    gradient = inprocess.KINDS["gradient"]
    wanted = {"demo": page, "gradient-demo": gradient}
    if any(kind.endswith("session") for kind in kinds):
        token = await _new_session(app, inprocess)
        header = [(b"authorization", f"Bearer {token}".encode())]
        wanted["session"] = (page[0], page[1], header)
        wanted["gradient-session"] = (gradient[0], gradient[1], header)
    for kind in kinds:
        inprocess.KINDS[kind] = wanted[kind]
    return inprocess, app, lifespan


async def _round(requests: int, kinds: list[str]) -> dict[str, Any]:
    inprocess, app, lifespan = await _started(kinds)
    figures = {}
    for kind in kinds:
        micros, status, _ = await inprocess.measure(app, kind, requests, None)
        assert status == 200, (kind, status)
        figures[kind] = micros
    lifespan.cancel()
    return figures


WARM_UP = 200


async def _send_only(kind: str, requests: int) -> None:
    """WARM_UP requests of `kind`, then `requests` more, untimed (for callgrind)."""
    inprocess, app, lifespan = await _started([kind])
    sent: list[dict[str, Any]] = []
    for _ in range(WARM_UP + requests):
        sent = await inprocess.call(app, *inprocess.KINDS[kind])
    assert sent[0]["status"] == 200, (kind, sent[0])
    lifespan.cancel()


def _instructions(python: str, kind: str, requests: int) -> int:
    """One request's instructions: callgrind's total with `requests` requests after the warm-up,
    less its total with none, divided by `requests`."""
    totals = []
    for count in (0, requests):
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                python,
                __file__,
                "--child",
                "--send-only",
                kind,
                "--requests",
                str(count),
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            check=True,
        )
        totals.append(int(re.findall(r"Collected : (\d+)", done.stderr)[-1]))
    return round((totals[1] - totals[0]) / requests)


def measure_instructions(python: str, requests: int) -> dict[str, Any]:
    """Each kind's instructions a request, and what a session's request costs beside demo-user's."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not available (apt-get install valgrind)")
    counts = {kind: _instructions(python, kind, requests) for kind in KINDS}
    return {
        "requests": requests,
        "instructions_per_request": counts,
        "session_x_demo": round(counts["session"] / counts["demo"], 3),
        "gradient_session_x_demo": round(counts["gradient-session"] / counts["gradient-demo"], 3),
        "target_session_x_demo": TARGET_SESSION_RATIO,
    }


async def _memory(sessions: int) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench"))
    import gc

    import inprocess

    from evalmock.server.app import create_app
    from evalmock.server.settings import ServerSettings

    app = create_app(ServerSettings())
    lifespan = await inprocess.start(app)
    path, query, _ = inprocess.KINDS["page"]
    await inprocess.call(app, *inprocess.KINDS["page"])  # the world's first page, built
    gc.collect()
    resident = _resident_mib()
    tracemalloc.start()
    for _ in range(sessions):
        token = await _new_session(app, inprocess)
        await inprocess.call(app, path, query, [(b"authorization", f"Bearer {token}".encode())])
    gc.collect()
    heap, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    added = _resident_mib() - resident
    lifespan.cancel()
    return {
        "sessions": sessions,
        "rss_added_mib": round(added, 1),
        "heap_added_mib": round(heap / 2**20, 1),
        "target_mib": TARGET_SESSIONS_MIB,
    }


# -- over HTTP: one server under Granian, wrk, the two tokens in turn
# ------------------------------------------------------------------------


def _session_token_over_http(base: str) -> str:
    request = urllib.request.Request(
        base + "/__evalmock/sessions",
        data=b"{}",
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())["token"]


def measure_http(
    python: str, wrk: str, rounds: int, seconds: int, connections: int, warmup: int
) -> dict[str, Any]:
    """The reference page with `demo-user` and with a default session's token, on one server,
    alternating runs of wrk; CPU per request from the server's process tree. The session's token
    lives only as long as the server, and its request file is removed with it."""
    server = lib.start_evalmock(python, "evalmock-sessions", extra=["--server", "granian"])
    path = "/v1" + lib.EXAMPLE_TEST_SET_PATH
    files = {"demo": lib.write_request_file("sessions-demo", [(path, lib.TOKEN)])}
    runs: dict[str, list[lib.LoadResult]] = {"demo": [], "session": []}
    try:
        token = _session_token_over_http(server.base)
        files["session"] = lib.write_request_file("sessions-session", [(path, token)])
        for label in runs:
            lib.run_wrk(wrk, server.base, files[label], connections, warmup)
        for number in range(rounds):
            for label in ("demo", "session") if number % 2 == 0 else ("session", "demo"):
                before = lib.tree_cpu_seconds(server.proc.pid)
                result = lib.run_wrk(wrk, server.base, files[label], connections, seconds)
                cpu = (lib.tree_cpu_seconds(server.proc.pid) - before) / max(result.requests, 1)
                runs[label].append(replace(result, cpu_us_per_request=round(cpu * 1e6, 1)))
                lib.log(
                    f"  round {number + 1} {label}: {result.rps} req/s, "
                    f"{runs[label][-1].cpu_us_per_request} µs CPU a request, errors "
                    f"{result.error_count}, steal {result.steal_pct}%"
                )
    finally:
        lib.stop(server.proc)
        files.get("session", Path()).unlink(missing_ok=True)
    pairs = list(zip(runs["session"], runs["demo"], strict=True))
    return {
        "request": "GET " + path,
        "rounds": rounds,
        "seconds": seconds,
        "connections": connections,
        "servers": {label: lib.median_result(results) for label, results in runs.items()},
        "cpu_us_per_request": {
            label: round(statistics.median(r.cpu_us_per_request for r in results), 1)
            for label, results in runs.items()
        },
        # what a session's request costs beside a demo token's: CPU, then throughput (medians of
        # the per-round ratios)
        "session_x_demo_cpu": round(
            statistics.median(s.cpu_us_per_request / d.cpu_us_per_request for s, d in pairs), 3
        ),
        "demo_x_session_rps": round(statistics.median(d.rps / s.rps for s, d in pairs), 3),
        "errors": sum(r.error_count for results in runs.values() for r in results),
        "target_session_x_demo": TARGET_SESSION_RATIO,
    }


# -- the parent: rounds in turn, medians and ratios
# ------------------------------------------------------------------------


def _child(python: str, source: Path | None, *args: str) -> dict[str, Any]:
    """One round in a child process of `python`, over `source`'s evalmock (None: the installed
    one)."""
    environment = {**os.environ, **({"PYTHONPATH": str(source / "src")} if source else {})}
    done = subprocess.run(
        [python, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=900,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"a round failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _baseline_source(revision: str) -> Path:
    folder = lib.RESULTS / "baseline" / revision
    if not (folder / "src").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", revision, "pyproject.toml", "src", "openapi", "fixtures"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def measure(python: str, baseline: str, rounds: int, requests: int) -> dict[str, Any]:
    """Rounds of this revision (every kind) and of the baseline (the kinds without a session) in
    turn; then the memory of 1,000 sessions."""
    source = _baseline_source(baseline)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(rounds):
        ours.append(_child(python, None, "--requests", str(requests), "--kinds", ",".join(KINDS)))
        plain = "demo,gradient-demo"
        theirs.append(_child(python, source, "--requests", str(requests), "--kinds", plain))
    memory = _child(python, None, "--memory", str(SESSIONS))

    def median(runs: list[dict[str, float]], kind: str) -> float:
        return round(statistics.median(run[kind] for run in runs), 1)

    def ratio(top: list[dict[str, float]], a: str, bottom: list[dict[str, float]], b: str) -> float:
        return round(statistics.median(t[a] / u[b] for t, u in zip(top, bottom, strict=True)), 3)

    return {
        "rounds": rounds,
        "requests_per_round": requests,
        "baseline": baseline,
        "cpu_us_per_request": {kind: median(ours, kind) for kind in KINDS},
        "cpu_us_per_request_baseline": {k: median(theirs, k) for k in ("demo", "gradient-demo")},
        "session_x_demo": ratio(ours, "session", ours, "demo"),
        "gradient_session_x_demo": ratio(ours, "gradient-session", ours, "gradient-demo"),
        "demo_x_baseline": ratio(ours, "demo", theirs, "demo"),
        "gradient_demo_x_baseline": ratio(ours, "gradient-demo", theirs, "gradient-demo"),
        "target_session_x_demo": TARGET_SESSION_RATIO,
        "memory": memory,
        "machine": {"python": python, "cpus": os.cpu_count(), "at": time.strftime("%F %T")},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="main", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=3000, help="per kind and round")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--http", action="store_true", help="also over HTTP, under Granian with wrk (needs wrk)"
    )
    parser.add_argument("--seconds", type=int, default=10, help="of each wrk run")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="only count each kind's instructions a request under callgrind (needs valgrind)",
    )
    parser.add_argument("--send-only", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kinds", default=",".join(KINDS), help=argparse.SUPPRESS)
    parser.add_argument("--memory", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        if args.send_only:
            asyncio.run(_send_only(args.send_only, args.requests))
        elif args.memory:
            print(json.dumps(asyncio.run(_memory(args.memory))))
        else:
            print(json.dumps(asyncio.run(_round(args.requests, args.kinds.split(",")))))
        return 0
    if args.instructions:
        result = measure_instructions(sys.executable, args.requests)
    else:
        result = measure(sys.executable, args.baseline, args.rounds, args.requests)
    if args.http:
        wrk = lib.ensure_wrk()
        if wrk is None:
            raise SystemExit("wrk is not available (apt-get install wrk)")
        result["http"] = measure_http(sys.executable, wrk, args.rounds, args.seconds, 32, 3)
    if args.json:
        print(json.dumps(result))
        return 0
    for key, value in result.items():
        print(f"{key:30} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
