"""Walk state in `evalmock proxy`: its memory for 10,000 open walks (in process), the proxy's
resident memory over 100,000 proxied pages of walks, and the latency the proxy adds, side by side
with another revision's proxy.

    .venv/bin/python bench/walks.py                  # all three, against `main` as the baseline
    .venv/bin/python bench/walks.py --only state,overhead --baseline 50748b2

The state is measured in this interpreter, so it runs with evalmock installed (the project's .venv).

Results go to bench/results/walks.json; docs/maintainers/benchmarks.md explains the figures.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
import tracemalloc
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import lib

PARTS = ("state", "proxied", "overhead")


# -- the walk state alone
# ------------------------------------------------------------------------------------------
def state(walks: int = 10_000, pages_per_walk: int = 2, cases: int = 25) -> dict[str, Any]:
    """Memory held by the walk state of `walks` open walks of `pages_per_walk` pages each (traced
    allocations, after the exchanges that built it are gone), and the cost of judging one page that
    continues a walk."""
    from evalmock.harness.checks.exchange import Exchange
    from evalmock.harness.checks.policy import Policy
    from evalmock.harness.traffic.audit import TrafficAudit

    project = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"

    def exchange(walk: int, number: int, cursor: str | None, next_cursor: str | None) -> Exchange:
        minute = 10_000_000 - (walk * pages_per_walk + number) * cases
        data = [
            {"id": f"case-{uuid.uuid4()}", "addedAt": _instant(minute - n)} for n in range(cases)
        ]
        body: dict[str, Any] = {"data": data, "hasMore": next_cursor is not None}
        query = {"projectId": project, "limit": str(cases)}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        if cursor is not None:
            query["cursor"] = cursor
        encoded = urllib.parse.urlencode(query)
        url = f"http://upstream/v1/agents/agent-{walk % 50}/test-set/cases?{encoded}"
        return Exchange(
            "GET",
            url,
            200,
            {"content-type": "application/json"},
            json.dumps(body).encode(),
            {"authorization": f"Bearer user-{walk % 200}-token"},
        )

    def fill(traced: bool) -> tuple[Any, list[float]]:
        """Open the walks; the pages are made just before each is observed, so that only the state
        stays."""
        walker = TrafficAudit(Policy(), apis=("test-set",)).walks
        assert walker is not None
        timings = []
        for walk in range(walks):
            cursor = None
            for number in range(pages_per_walk):
                next_cursor = f"{uuid.uuid4().hex * 3}"  # as long as a sealed cursor
                page = exchange(walk, number, cursor, next_cursor)
                # Parsed before the clock starts: the judge has parsed them already.
                page.json_or_none(), page.query, page.query_values
                started = time.perf_counter()
                walker.observe(page)
                if cursor is not None and not traced:
                    timings.append(time.perf_counter() - started)
                cursor = next_cursor
        return walker, timings

    gc.collect()
    rss_before = lib.rss_mib(os.getpid())
    walker, timings = fill(traced=False)
    gc.collect()
    rss_growth = lib.rss_mib(os.getpid()) - rss_before
    del walker
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    walker, _ = fill(traced=True)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    traced = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return {
        "open_walks": len(walker.walks),
        "pages_held": walker.pages,
        "cases_per_page": cases,
        "traced_mib": round(traced / 2**20, 1),
        "rss_growth_mib": round(rss_growth, 1),
        "continuing_page_us_p50": round(statistics.median(timings) * 1e6, 1),
        "target_lt_50_mib": traced / 2**20 < 50,
    }


def _instant(minute: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(minute * 60))


# -- the proxy's memory over many pages
# ----------------------------------------------------------------------------
def proxied(
    python: str, pages: int, samples: int = 10, max_walks: int | None = None
) -> dict[str, Any]:
    """`evalmock proxy` (every check of the default profile, with the targets, and `max_walks` when
    given) in front of `evalmock serve`, walked
    by one client: walks over every target project with limits 25, 50 and 100 and three filters,
    half of them left open after two pages, the rest to their end. The proxy's resident memory at
    every tenth of the pages."""
    targets_path = lib.RESULTS / "walks-targets.toml"
    server = lib.start_evalmock(
        python, "walks-upstream", extra=["--write-targets", str(targets_path)]
    )
    bound = ["--max-walks", str(max_walks)] if max_walks else []
    proxy = lib.start_proxy(
        python, server.base, "walks-proxy", extra=["--targets", str(targets_path), *bound]
    )
    projects = tomllib.loads(targets_path.read_text())["test_set"]["projects"]
    connection = http.client.HTTPConnection(lib.HOST, proxy.port, timeout=30)
    rss = [{"pages": 0, "rss_mib": proxy.rss()}]
    sent, walks, started = 0, 0, time.perf_counter()
    filters = ({}, {"include": "retired"}, {"kind": "hand"})
    try:
        while sent < pages:
            project = projects[walks % len(projects)]
            query = {
                "projectId": project["project_id"],
                "limit": str((25, 50, 100)[walks % 3]),
                **filters[(walks // 3) % 3],
            }
            path = f"/v1/agents/{project['agent_id']}/test-set/cases"
            abandon = walks % 2 == 0
            walks += 1
            for number in range(10_000):
                connection.request(
                    "GET",
                    f"{path}?{urllib.parse.urlencode(query)}",
                    headers={"Authorization": f"Bearer {lib.TOKEN}"},
                )
                response = connection.getresponse()
                body = json.loads(response.read())
                sent += 1
                if sent % (pages // samples) == 0:
                    rss.append({"pages": sent, "rss_mib": proxy.rss()})
                if (
                    response.status != 200
                    or not body.get("hasMore")
                    or (abandon and number == 1)
                    or sent >= pages
                ):
                    break
                query["cursor"] = body["nextCursor"]
    finally:
        connection.close()
        seconds = time.perf_counter() - started
        lib.stop(proxy.proc)
        lib.stop(server.proc)
    return {
        "pages": sent,
        "walks": walks,
        "max_walks": max_walks,
        "seconds": round(seconds, 1),
        "rss": rss,
        "rss_growth_after_first_tenth_mib": round(rss[-1]["rss_mib"] - rss[1]["rss_mib"], 1),
    }


# -- the latency the proxy adds, this revision against a baseline
# --------------------------------------------------
def overhead(python: str, baseline: str, seconds: int, rounds: int) -> dict[str, Any]:
    """The example request (a first page: each one opens a walk) with every check on, direct and
    through this revision's proxy and the baseline's, in alternating rounds of `wrk -c1`; medians of
    the rounds."""
    wrk = lib.ensure_wrk()
    if wrk is None:
        raise SystemExit("wrk is needed (apt-get install wrk)")
    source = _baseline_source(baseline)
    targets_path = lib.RESULTS / "walks-overhead-targets.toml"
    server = lib.start_evalmock(
        python, "walks-overhead-upstream", extra=["--write-targets", str(targets_path)]
    )
    every_check = ["--strict", "--profile", "digitalocean-live", "--targets", str(targets_path)]
    servers = {
        "direct": server,
        "this revision": lib.start_proxy(
            python, server.base, "walks-proxy-this", extra=every_check
        ),
        f"baseline {baseline}": _start_baseline_proxy(python, source, server.base, every_check),
    }
    request = [("/v1" + lib.EXAMPLE_TEST_SET_PATH, lib.TOKEN)]
    runs: dict[str, list[lib.LoadResult]] = {label: [] for label in servers}
    try:
        for label, running in servers.items():  # warm up
            lib.run_wrk(
                wrk, running.base, lib.write_request_file(f"walks-{_slug(label)}", request), 1, 2
            )
        for _ in range(rounds):
            for label, running in servers.items():
                path = lib.write_request_file(f"walks-{_slug(label)}", request)
                runs[label].append(lib.run_wrk(wrk, running.base, path, 1, seconds))
    finally:
        for running in servers.values():
            lib.stop(running.proc)
    table = {
        label: {
            "p50_ms": statistics.median(r.p50_ms for r in results),
            "p99_ms": statistics.median(r.p99_ms for r in results),
            "rps": round(statistics.median(r.rps for r in results)),
        }
        for label, results in runs.items()
    }
    this, base = table["this revision"]["p50_ms"], table[f"baseline {baseline}"]["p50_ms"]
    direct = table["direct"]["p50_ms"]
    return {
        "servers": table,
        "added_p50_ms_this": round(this - direct, 2),
        "added_p50_ms_baseline": round(base - direct, 2),
        "growth_p50_ms": round(this - base, 2),
        "target_growth_le_0_5_ms": this - base <= 0.5,
        "rounds": rounds,
        "seconds": seconds,
    }


def _baseline_source(revision: str) -> Path:
    """The baseline revision's package with its documents and fixtures (a checkout, as evalmock
    finds them), exported with `git archive` into bench/results (git-ignored)."""
    folder = lib.RESULTS / "baseline" / revision
    if not (folder / "pyproject.toml").exists():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", revision, "pyproject.toml", "src", "openapi", "fixtures"],
            cwd=lib.ROOT,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def _start_baseline_proxy(python: str, source: Path, upstream: str, extra: list[str]) -> lib.Server:
    """The baseline's proxy: the same interpreter and dependencies, its own evalmock first on the
    path."""
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(source)
    try:
        return lib.start_proxy(python, upstream, "walks-proxy-baseline", extra=extra)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous


def _slug(label: str) -> str:
    return "".join(char if char.isalnum() else "-" for char in label)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated: {', '.join(PARTS)}"
    )
    parser.add_argument(
        "--pages", type=int, default=100_000, help="pages to proxy for the memory run"
    )
    parser.add_argument(
        "--max-walks", type=int, help="the proxy's --max-walks in the memory run (default its own)"
    )
    parser.add_argument(
        "--baseline", default="main", help="the revision to compare the proxy's latency with"
    )
    parser.add_argument(
        "--seconds", type=int, default=10, help="seconds per round of the latency run"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the latency run")
    parser.add_argument("--python", help="interpreter with evalmock installed")
    args = parser.parse_args(argv)
    python = lib.evalmock_python(args.python)
    lib.RESULTS.mkdir(parents=True, exist_ok=True)
    output = lib.RESULTS / "walks.json"
    results: dict[str, Any] = json.loads(output.read_text()) if output.exists() else {}
    results["machine"] = {**lib.machine_facts(python), "date": time.strftime("%Y-%m-%d %H:%M")}
    for part in args.only.split(","):
        lib.log(f"walks: {part}")
        load_before = os.getloadavg()[0]
        if part == "state":
            result = {"2 pages a walk": state(), "5 pages a walk": state(pages_per_walk=5)}
        elif part == "proxied":
            result = proxied(python, args.pages, max_walks=args.max_walks)
        elif part == "overhead":
            result = overhead(python, args.baseline, args.seconds, args.rounds)
        else:
            parser.error(f"unknown part {part!r}")
        result["load_average"] = {
            "before": round(load_before, 2),
            "after": round(os.getloadavg()[0], 2),
        }
        results[part] = result
        output.write_text(json.dumps(results, indent=2))
        print(json.dumps({part: result}, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
