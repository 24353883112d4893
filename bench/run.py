"""Benchmarks of `evalmock serve` against Stoplight Prism, and hardening runs; one command runs them
all.

    python3.11 bench/run.py                 # everything (about 20 minutes on 2 cores)
    python3.11 bench/run.py --quick         # every section, shorter runs (about 3 minutes)
    python3.11 bench/run.py --only throughput,startup

It installs what it needs: wrk from Debian's packages (apt-get, when run as root), Stoplight Prism
from npm into bench/.tools; evalmock runs from --python, else the project's .venv, else this
interpreter, else a .venv made by dev.py. Every server listens on 127.0.0.1 only and is pinned with
taskset to CPU 0, the load generator to CPU 1; every run is bounded in time; every process started
here is stopped on exit. Results go to bench/results/ (JSON per section plus summary.md);
docs/maintainers/benchmarks.md explains them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import audit_workers
import chart
import lib
import sessions
import slowloris

UVICORN = ["--server", "uvicorn"]
GRANIAN = ["--server", "granian"]
STEAL_WARNING_PCT = (
    5.0  # steal above this in a section: its ratios moved by the host, not by the code
)
SECTIONS = (
    "startup",
    "throughput",
    "mixed",
    "world_size",
    "harness",
    "audit_workers",
    "fuzz",
    "load",
    "workers",
    "data",
    "proxy",
    "abuse",
    "sessions",
)


@dataclass(frozen=True)
class Plan:
    """How long and how often each section runs."""

    rounds: int = 3
    seconds: int = 10
    warmup_seconds: int = 3
    connections: int = 32
    startup_trials: int = 5
    world_sizes: tuple[int, ...] = (1_000, 100_000, 1_000_000, 10_000_000)
    page_seconds: int = 5
    fuzz_requests: int = 10_000
    fuzz_max_seconds: int = 600
    load_connections: int = 64
    load_seconds: int = 60
    workers: int = 2
    data_sizes: tuple[int, ...] = (10, 100, 1_000)  # --cases of the worlds exported as --data files
    abuse_connections: int = 500  # half-open connections held against each server
    abuse_seconds: int = 60


QUICK = Plan(
    rounds=1,
    seconds=5,
    warmup_seconds=1,
    startup_trials=3,
    page_seconds=3,
    fuzz_requests=1_000,
    fuzz_max_seconds=180,
    load_seconds=15,
    data_sizes=(10, 100),
    abuse_seconds=10,
)


class Bench:
    def __init__(self, plan: Plan, python: str, wrk: str, prism: Path) -> None:
        self.plan = plan
        self.python = python
        self.wrk = wrk
        self.prism = prism
        self.results: dict[str, Any] = {}
        self._targets: dict[str, Any] | None = None

    # -- shared helpers
    # -------------------------------------------------------------------------------------
    def targets(self) -> dict[str, Any]:
        """Known agents, projects and test cases, as `evalmock serve --write-targets` writes
        them."""
        if self._targets is None:
            path = lib.RESULTS / "targets.toml"
            server = lib.start_evalmock(
                self.python, "targets", extra=["--write-targets", str(path)]
            )
            lib.stop(server.proc)
            self._targets = lib.read_targets(path)
        return self._targets

    def warm_and_measure(
        self,
        servers: dict[str, lib.Server],
        files: dict[str, Path],
        connections: int,
        seconds: int,
        rounds: int | None = None,
    ) -> dict[str, list[lib.LoadResult]]:
        """Alternating rounds (the plan's number unless told): every server gets one run per round,
        in a rotating order."""
        for label, server in servers.items():
            lib.run_wrk(self.wrk, server.base, files[label], connections, self.plan.warmup_seconds)
        runs: dict[str, list[lib.LoadResult]] = {label: [] for label in servers}
        order = list(servers)
        for round_number in range(rounds or self.plan.rounds):
            for label in order[round_number % len(order) :] + order[: round_number % len(order)]:
                pid = servers[label].proc.pid
                cpu_before, switches_before = lib.tree_cpu_seconds(pid), lib.tree_switches(pid)
                result = lib.run_wrk(
                    self.wrk, servers[label].base, files[label], connections, seconds
                )
                if result.requests:
                    cpu_us = (lib.tree_cpu_seconds(pid) - cpu_before) / result.requests * 1e6
                    switches = (lib.tree_switches(pid) - switches_before) / result.requests
                    result = replace(
                        result,
                        cpu_us_per_request=round(cpu_us, 1),
                        switches_per_request=round(switches, 2),
                    )
                runs[label].append(result)
                lib.log(
                    f"  round {round_number + 1} {label}: {result.rps} req/s, p50 {result.p50_ms} "
                    "ms, "
                    f"p99 {result.p99_ms} ms, errors {result.error_count}, "
                    f"{result.cpu_us_per_request} µs CPU a request, {result.switches_per_request} "
                    "switches a "
                    f"request, steal {result.steal_pct}%"
                )
        return runs

    @staticmethod
    def summarise(
        runs: dict[str, list[lib.LoadResult]], servers: dict[str, lib.Server]
    ) -> dict[str, Any]:
        table = {}
        for label, results in runs.items():
            table[label] = {
                **lib.median_result(results),
                "rss_mib": servers[label].rss(),
                "runs": [asdict(r) for r in results],
            }
        return table

    # -- sections
    # -------------------------------------------------------------------------------------------
    def startup(self) -> dict[str, Any]:
        """Time from spawn to the first 200 of the example request, and resident memory then."""
        trials: dict[str, list[dict[str, float]]] = {"evalmock": [], "prism": []}
        for _ in range(self.plan.startup_trials):
            for label in trials:
                if label == "evalmock":
                    server = lib.start_evalmock(self.python, log_name="startup-evalmock")
                else:
                    server = lib.start_prism(
                        self.prism, "agent-test-set.yaml", "prism", log_name="startup-prism"
                    )
                # CPU time spent until the first 200: what the machine's other work disturbs least.
                cpu_s = lib.tree_cpu_seconds(server.proc.pid)
                time.sleep(1.0)  # settle, then read memory once more
                trials[label].append(
                    {
                        "startup_s": round(server.startup_s, 3),
                        "cpu_s_at_first_200": round(cpu_s, 2),
                        "rss_at_first_200_mib": server.rss_after_start_mib,
                        "rss_after_1s_mib": server.rss(),
                    }
                )
                lib.stop(server.proc)
        summary = {
            label: {
                "startup_s_median": round(statistics.median(t["startup_s"] for t in rows), 3),
                "startup_s_max": max(t["startup_s"] for t in rows),
                "cpu_s_median": statistics.median(t["cpu_s_at_first_200"] for t in rows),
                "rss_mib_median": statistics.median(t["rss_after_1s_mib"] for t in rows),
                "trials": rows,
            }
            for label, rows in trials.items()
        }
        summary["targets"] = {
            "startup_le_1s": summary["evalmock"]["startup_s_median"] <= 1.0,
            "rss_le_half_prism": summary["evalmock"]["rss_mib_median"]
            <= summary["prism"]["rss_mib_median"] / 2,
        }
        return summary

    def throughput(self) -> dict[str, Any]:
        """The page's example list request, same on every server, 32 connections, alternating
        rounds."""
        servers = {
            # The same app under each HTTP server: Granian (`evalmock`, the default) and uvicorn.
            "evalmock": lib.start_evalmock(self.python, extra=GRANIAN),
            "evalmock-uvicorn": lib.start_evalmock(self.python, "evalmock-uvicorn", extra=UVICORN),
            "prism-static-default": lib.start_prism(
                self.prism, "agent-test-set.yaml", "prism-static-default", quiet=False
            ),
            "prism-static-quiet": lib.start_prism(
                self.prism, "agent-test-set.yaml", "prism-static-quiet"
            ),
            "prism-dynamic-quiet": lib.start_prism(
                self.prism, "agent-test-set.yaml", "prism-dynamic-quiet", dynamic=True
            ),
            # The Python ceiling: Starlette answering fixed bytes, no framework work at all, under
            # each server.
            "bare-starlette": lib.start_bare_starlette(self.python, server="granian"),
            "bare-starlette-uvicorn": lib.start_bare_starlette(
                self.python, "bare-starlette-uvicorn", server="uvicorn"
            ),
        }
        files = {
            label: lib.write_request_file(
                f"example-{label}",
                [(server.test_set_prefix + lib.EXAMPLE_TEST_SET_PATH, lib.TOKEN)],
            )
            for label, server in servers.items()
        }
        # The same request with `Prefer: example=page`: evalmock then answers the document's
        # example, the very body Prism's static mode sends, so this pairing compares the servers'
        # own cost per request.
        for label in ("evalmock", "evalmock-uvicorn"):
            servers[f"{label}-same-body"] = servers[label]
            files[f"{label}-same-body"] = lib.write_request_file(
                f"example-{label}-same-body",
                [("/v1" + lib.EXAMPLE_TEST_SET_PATH, lib.TOKEN, "example=page")],
            )
        try:
            runs = self.warm_and_measure(servers, files, self.plan.connections, self.plan.seconds)
            table = self.summarise(runs, servers)
        finally:
            for server in servers.values():
                lib.stop(server.proc)
        return {
            "request": "GET /v1" + lib.EXAMPLE_TEST_SET_PATH + " (Prism: without /v1)",
            "connections": self.plan.connections,
            "seconds": self.plan.seconds,
            "rounds": self.plan.rounds,
            "servers": table,
            "x_prism_quiet": versus(runs, "prism-static-quiet"),
            "x_prism_quiet_of_medians": versus_medians(runs, "prism-static-quiet"),
            "cpu_x_prism_quiet": cpu_versus(runs, "prism-static-quiet"),
            "x_bare_same_server": {
                label: versus(
                    runs, "bare-starlette-uvicorn" if "uvicorn" in label else "bare-starlette"
                )[label]
                for label in runs
                if label.startswith("evalmock")
            },
            "ratios": ratios({k: v for k, v in runs.items() if not k.endswith("same-body")}),
            "ratios_same_body": ratios(
                {
                    k: v
                    for k, v in runs.items()
                    if k == "evalmock-same-body" or not k.startswith("evalmock")
                },
                ours="evalmock-same-body",
            ),
        }

    def mixed(self) -> dict[str, Any]:
        """Page walks under several filters, limits, callers and real cursors; and the DigitalOcean
        call."""
        targets = self.targets()
        servers = {
            "evalmock": lib.start_evalmock(self.python, extra=GRANIAN),
            "evalmock-uvicorn": lib.start_evalmock(self.python, "evalmock-uvicorn", extra=UVICORN),
            "prism-static-quiet": lib.start_prism(
                self.prism, "agent-test-set.yaml", "prism-static-quiet"
            ),
            "prism-dynamic-quiet": lib.start_prism(
                self.prism, "agent-test-set.yaml", "prism-dynamic-quiet", dynamic=True
            ),
            "prism-gradient-static-quiet": lib.start_prism(
                self.prism, "gradient-evaluation-test-cases.yaml", "prism-gradient-static-quiet"
            ),
            "prism-gradient-dynamic-quiet": lib.start_prism(
                self.prism,
                "gradient-evaluation-test-cases.yaml",
                "prism-gradient-dynamic-quiet",
                dynamic=True,
            ),
        }
        try:
            walks = lib.walk_test_set(servers["evalmock"], targets)
            gradient = lib.gradient_lines(targets)
            results: dict[str, Any] = {
                "test_set_requests": len(walks),
                "gradient_requests": len(gradient),
            }
            for workload, lines, rivals in (
                ("test-set", walks, ("prism-static-quiet", "prism-dynamic-quiet")),
                (
                    "gradient",
                    gradient,
                    ("prism-gradient-static-quiet", "prism-gradient-dynamic-quiet"),
                ),
            ):
                chosen = {
                    "evalmock": servers["evalmock"],
                    "evalmock-uvicorn": servers["evalmock-uvicorn"],
                    **{r: servers[r] for r in rivals},
                }
                prefix_of = {
                    label: (s.test_set_prefix if workload == "test-set" else s.gradient_prefix)
                    for label, s in chosen.items()
                }
                files = {
                    label: lib.write_request_file(
                        f"mixed-{workload}-{label}", lib.prefixed(lines, prefix_of[label])
                    )
                    for label in chosen
                }
                lib.log(f" mixed workload {workload}: {len(lines)} distinct requests")
                runs = self.warm_and_measure(
                    chosen, files, self.plan.connections, self.plan.seconds
                )
                renamed = {label.replace("gradient-", ""): r for label, r in runs.items()}
                results[workload] = {
                    "servers": self.summarise(runs, chosen),
                    "x_prism_quiet": versus(renamed, "prism-static-quiet"),
                    "x_prism_quiet_of_medians": versus_medians(renamed, "prism-static-quiet"),
                    "cpu_x_prism_quiet": cpu_versus(renamed, "prism-static-quiet"),
                    "ratios": ratios({k: v for k, v in renamed.items() if k != "evalmock-uvicorn"}),
                }
        finally:
            for server in servers.values():
                lib.stop(server.proc)
        return results

    def world_size(self) -> dict[str, Any]:
        """One page's latency (one connection, so no queueing) as the world grows; memory of
        each."""
        servers = {}
        try:
            for cases in self.plan.world_sizes:
                servers[str(cases)] = lib.start_evalmock(self.python, f"cases-{cases}", cases=cases)
                lib.log(f"  --cases {cases}: first 200 after {servers[str(cases)].startup_s:.2f} s")
            # Pages 2..5 of 25 under three filters, walked on each world with its own cursors; every
            # page is full in every world, so each size answers the same number of cases.
            walks = {
                label: [
                    line
                    for line in lib.walk_test_set(
                        server, {}, max_pages=5, limits=(25,), filters=lib.WALK_FILTERS[:4]
                    )
                    if "cursor=" in line[0]
                ]
                for label, server in servers.items()
            }
            first = {label: [(lib.EXAMPLE_TEST_SET_PATH, lib.TOKEN)] for label in servers}
            out: dict[str, Any] = {"sizes": {}}
            for name, lines_of in (("first-page", first), ("cursor-pages", walks)):
                files = {
                    label: lib.write_request_file(
                        f"size-{name}-{label}", lib.prefixed(lines_of[label], "/v1")
                    )
                    for label in servers
                }
                runs = self.warm_and_measure(servers, files, 1, self.plan.page_seconds)
                for label, results in runs.items():
                    row = out["sizes"].setdefault(
                        label,
                        {
                            "startup_s": round(servers[label].startup_s, 3),
                            "rss_after_start_mib": servers[label].rss_after_start_mib,
                        },
                    )
                    row[name] = lib.median_result(results)
            for label, server in servers.items():
                out["sizes"][label]["rss_after_runs_mib"] = server.rss()
        finally:
            for server in servers.values():
                lib.stop(server.proc)
        small, large = str(self.plan.world_sizes[0]), str(self.plan.world_sizes[-1])
        for name in ("first-page", "cursor-pages"):
            ratio = out["sizes"][large][name]["p50_ms"] / max(
                out["sizes"][small][name]["p50_ms"], 1e-6
            )
            out[f"p50_ratio_{name}"] = round(ratio, 2)
        rss = [out["sizes"][label]["rss_after_runs_mib"] for label in (small, large)]
        out["rss_ratio"] = round(rss[1] / rss[0], 2)
        worst = max(out["p50_ratio_first-page"], out["p50_ratio_cursor-pages"])
        out["targets"] = {"page_p50_flat_le_1_2": worst <= 1.2}
        return out

    def harness(self) -> dict[str, Any]:
        """Wall time of `evalmock contract` (both APIs) against a local server."""
        targets_path = lib.RESULTS / "harness-targets.toml"
        server = lib.start_evalmock(
            self.python, "harness-server", extra=["--write-targets", str(targets_path)]
        )
        command = [
            self.python,
            "-m",
            "evalmock",
            "contract",
            "--base-url",
            server.base,
            "--targets",
            str(targets_path),
            "--junit",
            str(lib.RESULTS / "harness-junit.xml"),
            "--report",
            str(lib.RESULTS / "harness-report.md"),
        ]
        started = time.perf_counter()
        try:
            done = subprocess.run(
                ["taskset", "-c", lib.LOAD_CPU, *command],
                capture_output=True,
                text=True,
                timeout=1800,
                cwd=lib.ROOT,
            )
        finally:
            wall = time.perf_counter() - started
            lib.stop(server.proc)
        (lib.RESULTS / "harness-output.txt").write_text(done.stdout + done.stderr)
        return {
            "command": "evalmock contract --base-url URL --targets FILE --junit ... --report ...",
            "wall_s": round(wall, 1),
            "exit_code": done.returncode,
            "tail": (done.stdout + done.stderr).strip().splitlines()[-15:],
        }

    def audit_workers(self) -> dict[str, Any]:
        """`evalmock contract` against a server answering in 500 ms, with 1 and 8 workers
        (bench/audit_workers.py)."""
        return audit_workers.measure(self.python, [1, 8], 500)

    def sessions(self) -> dict[str, Any]:
        """A request with a session's token against one with a demo token, over HTTP (Granian, wrk)
        and in process, the hot path against `main`, and the memory of 1,000 sessions
        (bench/sessions.py)."""
        result = sessions.measure(self.python, "main", self.plan.rounds + 2, 3000)
        result["http"] = sessions.measure_http(
            self.python,
            self.wrk,
            self.plan.rounds,
            self.plan.seconds,
            self.plan.connections,
            self.plan.warmup_seconds,
        )
        return result

    def fuzz(self) -> dict[str, Any]:
        """Schemathesis, positive and negative, both APIs, until at least N requests
        (bench/fuzz.py)."""
        targets_path = lib.RESULTS / "fuzz-targets.toml"
        server = lib.start_evalmock(
            self.python, "fuzz-server", extra=["--write-targets", str(targets_path)]
        )
        output = lib.RESULTS / "fuzz-detail.json"
        command = [
            "taskset",
            "-c",
            lib.LOAD_CPU,
            self.python,
            str(lib.BENCH / "fuzz.py"),
            "--base-url",
            server.base,
            "--targets",
            str(targets_path),
            "--requests",
            str(self.plan.fuzz_requests),
            "--max-seconds",
            str(self.plan.fuzz_max_seconds),
            "--output",
            str(output),
        ]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=self.plan.fuzz_max_seconds + 300,
                cwd=lib.ROOT,
            )
            rss = server.rss()
        finally:
            lib.stop(server.proc)
        (lib.RESULTS / "fuzz-output.txt").write_text(done.stdout + done.stderr)
        if not output.exists():
            raise RuntimeError(f"fuzz.py failed: {(done.stdout + done.stderr)[-3000:]}")
        detail = json.loads(output.read_text())
        detail.pop("failures_detail", None)
        return {**detail, "server_rss_mib_after": rss}

    def load(self) -> dict[str, Any]:
        """64 connections, mixed requests on both APIs, 60 s: errors and resident-memory growth."""
        targets = self.targets()
        server = lib.start_evalmock(self.python, "load-server")
        try:
            lines = lib.prefixed(lib.walk_test_set(server, targets), "/v1")
            lines += lib.prefixed(lib.gradient_lines(targets), "/v2") * 4
            file = lib.write_request_file("load-mixed", lines)
            warm = lib.run_wrk(self.wrk, server.base, file, self.plan.load_connections, 5)
            rss_before = server.rss()
            result = lib.run_wrk(
                self.wrk, server.base, file, self.plan.load_connections, self.plan.load_seconds
            )
            rss_after = server.rss()
        finally:
            lib.stop(server.proc)
        growth = (rss_after - rss_before) / rss_before
        return {
            "connections": self.plan.load_connections,
            "seconds": self.plan.load_seconds,
            "distinct_requests": len(lines),
            "warmup": asdict(warm),
            "result": asdict(result),
            "rss_before_mib": rss_before,
            "rss_after_mib": rss_after,
            "rss_growth": round(growth, 4),
            "targets": {
                "zero_errors": result.error_count == 0 and warm.error_count == 0,
                "rss_growth_lt_10pct": growth < 0.10,
            },
        }

    def abuse(self) -> dict[str, Any]:
        """500 half-open connections held for 60 s (reopened as the server closes them) against
        `serve` and the proxy, each on Granian and on uvicorn: a normal request's p50 against the
        idle one (docs/hardening.md, "The servers under abuse")."""
        upstream = lib.start_evalmock(self.python, "abuse-upstream", extra=UVICORN, cpu=None)
        starts: dict[str, Callable[[], lib.Server]] = {
            "serve-granian": lambda: lib.start_evalmock(self.python, "abuse-serve", extra=GRANIAN),
            "serve-uvicorn": lambda: lib.start_evalmock(
                self.python, "abuse-serve-uvicorn", extra=UVICORN
            ),
            "proxy-granian": lambda: lib.start_proxy(
                self.python, upstream.base, "abuse-proxy", extra=GRANIAN
            ),
            "proxy-uvicorn": lambda: lib.start_proxy(
                self.python, upstream.base, "abuse-proxy-uvicorn", extra=UVICORN
            ),
        }
        results: dict[str, Any] = {}
        try:
            for label, start in starts.items():
                server = start()
                try:
                    results[label] = slowloris.hold(
                        server.port,
                        self.plan.abuse_connections,
                        self.plan.abuse_seconds,
                        _timed_get(server.example_url()),
                    )
                finally:
                    lib.stop(server.proc)
                lib.log(
                    f"  {label}: p50 {results[label]['held_p50_ms']} ms held, "
                    f"{results[label]['idle_p50_ms']} ms idle"
                )
        finally:
            lib.stop(upstream.proc)
        results["targets"] = {
            name: all(result["targets"][name] for result in results.values())
            for name in ("no_failed_request", "p50_within_2x_idle")
        }
        return results

    def workers(self) -> dict[str, Any]:
        """`--workers N`: cursors minted on fresh connections are accepted on other fresh
        connections."""
        server = lib.start_evalmock(
            self.python, "workers-server", workers=self.plan.workers, cpu=None
        )
        try:
            time.sleep(2.0)  # every worker up, not just the first to answer
            processes = [pid for pid in lib.process_tree(server.proc.pid) if pid != server.proc.pid]
            cpu_before = {pid: lib.cpu_seconds(pid) for pid in processes}
            cursors = []
            # urllib opens a new connection per request, so the kernel spreads them
            for _ in range(40):
                status, body = lib.get(server.example_url().replace("limit=25", "limit=5"))
                cursors.append(json.loads(body)["nextCursor"] if status == 200 else None)
            accepted = rejected = 0
            for cursor in cursors:
                for _ in range(10):
                    if cursor is None:
                        rejected += 1
                        continue
                    status, _ = lib.get(
                        server.example_url().replace("limit=25", "limit=5") + f"&cursor={cursor}"
                    )
                    accepted += status == 200
                    rejected += status != 200
            cpu_after = {
                pid: lib.cpu_seconds(pid) for pid in processes if Path(f"/proc/{pid}").exists()
            }
        finally:
            lib.stop(server.proc)
        busy = [pid for pid in cpu_after if cpu_after[pid] - cpu_before.get(pid, 0) > 0.05]
        return {
            "workers": self.plan.workers,
            "processes": len(processes),
            "busy_processes": len(busy),
            "cursor_requests": accepted + rejected,
            "accepted": accepted,
            "rejected": rejected,
            "targets": {"cross_worker_cursors_accepted": rejected == 0 and len(busy) >= 2},
        }

    def data(self) -> dict[str, Any]:
        """`--data FILE --data-only` with an exported world: start-up (and without data, for scale),
        and the time from a change to the file (written whole, then renamed over it, as editors
        save) until it is served."""
        # the same start without data
        plain = lib.start_evalmock(self.python, "data-none", log_name="data-none")
        lib.stop(plain.proc)
        rows = []
        for cases in self.plan.data_sizes:
            path = lib.RESULTS / f"data-{cases}.json"
            subprocess.run(
                [
                    self.python,
                    "-m",
                    "evalmock",
                    "fixtures",
                    "export",
                    "--cases",
                    str(cases),
                    "-o",
                    str(path),
                ],
                check=True,
                timeout=600,
            )
            document = json.loads(path.read_text(encoding="utf-8"))
            server = lib.start_evalmock(
                self.python,
                f"data-{cases}",
                extra=["--data", str(path), "--data-only"],
                log_name=f"data-{cases}",
            )
            try:
                test_case = document["gradient"][0]
                url = f"{server.base}/v2/gen-ai/evaluation_test_cases/{test_case['test_case_uuid']}"
                test_case["versions"][-1]["name"] = "changed"
                staged = path.with_suffix(".staged")
                staged.write_text(json.dumps(document), encoding="utf-8")
                changed = time.perf_counter()
                os.replace(staged, path)
                reload_s = None
                while time.perf_counter() - changed < 120:
                    status, body = lib.get(url)
                    if (
                        status == 200
                        and json.loads(body)["evaluation_test_case"]["name"] == "changed"
                    ):
                        reload_s = round(time.perf_counter() - changed, 3)
                        break
                    time.sleep(0.01)
            finally:
                lib.stop(server.proc)
            rows.append(
                {
                    "cases_per_project": cases,
                    "cases": sum(len(e["cases"]) for e in document["testSet"]),
                    "file_mib": round(path.stat().st_size / 2**20, 2),
                    "startup_s": round(server.startup_s, 3),
                    "rss_at_first_200_mib": server.rss_after_start_mib,
                    "change_served_after_s": reload_s,
                }
            )
        return {"startup_s_without_data": round(plain.startup_s, 3), "files": rows}

    def proxy(self) -> dict[str, Any]:
        """The latency `evalmock proxy` adds to the example request (25 cases) with every check on
        (--strict, the live profile, a targets file), and without judging it (--api gradient: the
        request only passes through); one connection (no queueing), direct and proxied in
        alternating rounds. What the proxy adds is taken within each round (proxied minus direct,
        measured a few seconds apart), then the median over the rounds: twice the plan's rounds at
        half its length, so that the machine's other work, which moves a one-connection p50 by more
        than the proxy costs, moves both sides of a difference alike."""
        targets_path = lib.RESULTS / "proxy-targets.toml"
        server = lib.start_evalmock(
            self.python, "proxy-upstream", extra=["--write-targets", str(targets_path)]
        )
        every_check = ["--strict", "--profile", "digitalocean-live", "--targets", str(targets_path)]
        # On the server's CPU: with one connection the processes never work at the same time.
        proxies = {
            "proxied": lib.start_proxy(self.python, server.base, "proxied", extra=every_check),
            "proxied-granian": lib.start_proxy(
                self.python, server.base, "proxied-granian", extra=[*every_check, *GRANIAN]
            ),
            "passed-through": lib.start_proxy(
                self.python, server.base, "passed-through", extra=["--api", "gradient"]
            ),
        }
        servers = {"direct": server, **proxies}
        request = [("/v1" + lib.EXAMPLE_TEST_SET_PATH, lib.TOKEN)]
        files = {label: lib.write_request_file(f"proxy-{label}", request) for label in servers}
        # The pages of real walks as well: pages the proxy has not seen byte for byte (a page with a
        # nextCursor differs every second), so what it remembers of a body seen before rarely
        # serves.
        walkers = {label: servers[label] for label in ("direct", "proxied")}
        try:
            walks = lib.prefixed(lib.walk_test_set(server, lib.read_targets(targets_path)), "/v1")
            walk_files = {
                label: lib.write_request_file(f"proxy-walks-{label}", walks) for label in walkers
            }
            seconds, rounds = max(1, self.plan.seconds // 2), 2 * self.plan.rounds
            runs = self.warm_and_measure(servers, files, 1, seconds, rounds)
            walk_runs = self.warm_and_measure(walkers, walk_files, 1, seconds, rounds)
            table = self.summarise(runs, servers)
            walk_table = self.summarise(walk_runs, walkers)
        finally:
            for running in servers.values():
                lib.stop(running.proc)

        def added(
            label: str, over: str, quantile: str, measured: dict[str, list[lib.LoadResult]] = runs
        ) -> float:
            per_round = [
                getattr(a, f"{quantile}_ms") - getattr(b, f"{quantile}_ms")
                for a, b in zip(measured[label], measured[over], strict=True)
            ]
            return round(statistics.median(per_round), 2)

        example = {
            "added_p50_ms": added("proxied", "direct", "p50"),
            "added_p99_ms": added("proxied", "direct", "p99"),
        }
        walked = {
            "added_p50_ms": added("proxied", "direct", "p50", walk_runs),
            "added_p99_ms": added("proxied", "direct", "p99", walk_runs),
        }
        return {
            "request": "GET /v1" + lib.EXAMPLE_TEST_SET_PATH,
            "connections": 1,
            "seconds": seconds,
            "rounds": rounds,
            "proxy_flags": " ".join(every_check[:-1]) + " FILE",
            "servers": table,
            **example,
            "forwarding_p50_ms": added("passed-through", "direct", "p50"),
            "judging_p50_ms": added("proxied", "passed-through", "p50"),
            "added_granian_p50_ms": added("proxied-granian", "direct", "p50"),
            "added_granian_p99_ms": added("proxied-granian", "direct", "p99"),
            "walks": {"requests": len(walks), "servers": walk_table, **walked},
            "targets": {
                "added_p50_le_2ms": example["added_p50_ms"] <= 2.0,
                "added_p99_le_5ms": example["added_p99_ms"] <= 5.0,
                "walks_added_p50_le_2ms": walked["added_p50_ms"] <= 2.0,
                "walks_added_p99_le_5ms": walked["added_p99_ms"] <= 5.0,
            },
        }


def _timed_get(url: str) -> Callable[[], float]:
    """A normal request on a new connection (urllib opens one each time), timed in seconds."""

    def timed() -> float:
        started = time.perf_counter()
        status, _ = lib.get(url, timeout=10.0)
        if status != 200:
            raise RuntimeError(f"status {status}")
        return time.perf_counter() - started

    return timed


def versus(runs: dict[str, list[lib.LoadResult]], base: str) -> dict[str, float | None]:
    """Every row's throughput as a ratio to `base`'s in the same rounds (median of the per-round
    ratios)."""
    out: dict[str, float | None] = {}
    for label, results in runs.items():
        per_round = [a.rps / b.rps for a, b in zip(results, runs[base], strict=True) if b.rps]
        out[label] = round(statistics.median(per_round), 2) if per_round else None
    return out


def versus_medians(runs: dict[str, list[lib.LoadResult]], base: str) -> dict[str, float | None]:
    """Every row's median throughput over `base`'s: no round is paired with another, so a round the
    host slowed on one side only moves this less than `versus` (whose per-round median decides the
    targets)."""
    theirs = statistics.median(r.rps for r in runs[base])
    return {
        label: round(statistics.median(r.rps for r in results) / theirs, 2) if theirs else None
        for label, results in runs.items()
    }


def cpu_versus(runs: dict[str, list[lib.LoadResult]], base: str) -> dict[str, float | None]:
    """How many requests each row serves for one CPU second, as a ratio to `base` (`base`'s CPU per
    request over the row's; medians of each). On a shared machine this moves far less than
    throughput does."""
    mine = statistics.median(r.cpu_us_per_request for r in runs[base])
    out: dict[str, float | None] = {}
    for label, results in runs.items():
        theirs = statistics.median(r.cpu_us_per_request for r in results)
        out[label] = round(mine / theirs, 2) if theirs and mine else None
    return out


def ratios(runs: dict[str, list[lib.LoadResult]], ours: str = "evalmock") -> dict[str, Any]:
    """evalmock against each rival: throughput ratio (median of per-round ratios) and both p99s."""
    mine = runs[ours]
    out = {}
    for label, theirs in runs.items():
        if label == ours:
            continue
        per_round = [a.rps / b.rps for a, b in zip(mine, theirs, strict=True) if b.rps]
        p99_ours = statistics.median(r.p99_ms for r in mine)
        p99_theirs = statistics.median(r.p99_ms for r in theirs)
        out[label] = {
            "throughput_ratio": round(statistics.median(per_round), 2) if per_round else None,
            "p99_ms_evalmock": p99_ours,
            "p99_ms_rival": p99_theirs,
            "lower_p99": p99_ours < p99_theirs,
        }
    return out


def summary_markdown(results: dict[str, Any], facts: dict[str, Any]) -> str:
    lines = [
        f"# bench results {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        "```",
        json.dumps(facts, indent=2),
        "```",
        "",
    ]
    for section, data in results.items():
        lines += [f"## {section}", "", "```json", json.dumps(strip_runs(data), indent=2), "```", ""]
    return "\n".join(lines)


def strip_runs(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: strip_runs(v) for k, v in data.items() if k != "runs"}
    if isinstance(data, list):
        return [strip_runs(v) for v in data]
    return data


def git_revision() -> str:
    """The commit measured, with `+changes` when the work tree differs from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=lib.ROOT
        ).stdout.strip()

    revision = git("rev-parse", "--short", "HEAD") or "unknown"
    return revision + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="shorter runs of every section")
    parser.add_argument("--only", help=f"comma-separated sections: {', '.join(SECTIONS)}")
    parser.add_argument("--python", help="interpreter with evalmock installed")
    args = parser.parse_args(argv)
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")

    # first: a wrong --python is said before anything is installed
    python = lib.evalmock_python(args.python)
    wrk = lib.ensure_wrk()
    if wrk is None:
        raise SystemExit(
            "wrk is not available (apt-get install wrk) and is needed for the load runs"
        )
    prism = lib.ensure_prism()
    bytecode = lib.compile_evalmock(python)
    plan = QUICK if args.quick else Plan()
    lib.RESULTS.mkdir(parents=True, exist_ok=True)
    facts = {
        **lib.machine_facts(python),
        "date": time.strftime("%Y-%m-%d"),
        "prism": lib.prism_version(prism),
        "wrk": subprocess.run([wrk, "-v"], capture_output=True, text=True).stdout.splitlines()[0],
        "commit": git_revision(),
        "plan": asdict(plan),
        "quick": args.quick,
        "bytecode_compiled": bytecode,
    }
    lib.log(
        f"machine: {facts['nproc']} cores, {facts['cpu']}, Python {facts['python_build']} "
        f"(calibration {facts['python_calibration_ms']} ms), Prism {facts['prism']}"
    )
    bench = Bench(plan, python, wrk, prism)
    sections: dict[str, Callable[[], dict[str, Any]]] = {
        name: getattr(bench, name) for name in SECTIONS
    }
    for name in chosen:
        lib.log(f"section {name}")
        started, ticks = time.perf_counter(), lib.cpu_ticks()
        try:
            result = sections[name]()
        except Exception as error:  # a failed section is reported, the others still run
            result = {"error": f"{type(error).__name__}: {error}"}
        result["section_seconds"] = round(time.perf_counter() - started, 1)
        # Other work on the machine skews a run; the load average (1 min) when the section ended
        # tells, and so does the CPU time the host gave other guests meanwhile (steal).
        result["load_average_after"] = round(os.getloadavg()[0], 2)
        result["steal_pct"] = lib.steal_pct(ticks, lib.cpu_ticks())
        if result["steal_pct"] >= STEAL_WARNING_PCT:
            lib.log(
                f"section {name}: the host took {result['steal_pct']}% of this machine's CPU time "
                "(steal); "
                "its figures are disturbed, run it again when the host is quieter"
            )
        bench.results[name] = result
        (lib.RESULTS / f"{name}.json").write_text(
            json.dumps({"machine": facts, name: result}, indent=2)
        )
        lib.log(f"section {name} done in {result['section_seconds']} s")
    (lib.RESULTS / "summary.md").write_text(summary_markdown(bench.results, facts))
    chart_path = chart.write(bench.results, facts, lib.RESULTS / "ratios.png")
    # this interpreter has no matplotlib: evalmock's may (it is a benchmark-only dependency)
    if chart_path is None:
        drawn = subprocess.run(
            [python, str(lib.BENCH / "chart.py"), str(lib.RESULTS)], capture_output=True, text=True
        )
        chart_path = lib.RESULTS / "ratios.png" if drawn.returncode == 0 else None
    lib.log(
        f"chart: {chart_path}"
        if chart_path
        else "chart: not drawn (pip install matplotlib to draw it)"
    )
    print(summary_markdown(bench.results, facts))
    return 1 if any("error" in r for r in bench.results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
