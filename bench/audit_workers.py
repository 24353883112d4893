"""`evalmock contract --workers N` against a slow service: the full default audit of `evalmock serve
--latency 500` with one worker and with eight, their wall times, and whether both reached the same
verdict and findings.

    python3.11 bench/audit_workers.py                  # workers 1 and 8, 500 ms
    python3.11 bench/audit_workers.py --workers 1,4,8 --latency 500

The server runs on CPU 0, the audits on CPU 1; results go to bench/results/audit_workers.json and
the reports (Markdown, one per worker count) beside it. The verdicts and findings are compared on
the reports (everything before the Passed table, with the request ids the server makes up per answer
masked), and the pass counts apart.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from typing import Any

import lib

REQUEST_ID = re.compile(r"\b[0-9a-f]{32}\b")


def findings(report: str) -> str:
    """The report up to its Passed table: the verdict, and every failure, warning and check not
    checked (the run's start time left out, and the request ids masked)."""
    head = report.split("\n## Passed", 1)[0]
    return REQUEST_ID.sub(
        "<id>", "\n".join(line for line in head.splitlines() if not line.startswith("| run |"))
    )


def passed(report: str) -> str:
    """The Passed table: how many responses or runs each check judged."""
    return report.split("\n## Passed", 1)[-1].split("\n## ", 1)[0]


def audit(python: str, base: str, targets: str, workers: int) -> dict[str, Any]:
    report = lib.RESULTS / f"audit-workers-{workers}.md"
    command = [
        python,
        "-m",
        "evalmock",
        "contract",
        "--base-url",
        base,
        "--targets",
        targets,
        "--quiet",
        "--workers",
        str(workers),
        "--report",
        str(report),
    ]
    started = time.perf_counter()
    done = subprocess.run(
        ["taskset", "-c", lib.LOAD_CPU, *command],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=lib.ROOT,
    )
    wall = time.perf_counter() - started
    (lib.RESULTS / f"audit-workers-{workers}.txt").write_text(done.stdout + done.stderr)
    text = report.read_text() if report.exists() else ""
    return {
        "workers": workers,
        "wall_s": round(wall, 1),
        "exit_code": done.returncode,
        "headline": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "",
        "_findings": findings(text),
        "_passed": passed(text),
    }


def measure(python: str, worker_counts: list[int], latency_ms: int) -> dict[str, Any]:
    lib.RESULTS.mkdir(parents=True, exist_ok=True)
    targets = lib.RESULTS / "audit-workers-targets.toml"
    server = lib.start_evalmock(
        python,
        "audit-workers-server",
        extra=["--latency", str(latency_ms), "--write-targets", str(targets)],
    )
    try:
        runs = [audit(python, server.base, str(targets), workers) for workers in worker_counts]
    finally:
        lib.stop(server.proc)
    first = runs[0]
    for run in runs:
        run["speedup"] = round(first["wall_s"] / run["wall_s"], 2)
        run["same_verdict_and_findings"] = (
            run["exit_code"] == first["exit_code"] and run["_findings"] == first["_findings"]
        )
        run["same_pass_counts"] = run["_passed"] == first["_passed"]
    for run in runs:
        del run["_findings"], run["_passed"]
    return {"latency_ms": latency_ms, "runs": runs}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--workers", default="1,8", help="worker counts, the first the baseline (default 1,8)"
    )
    parser.add_argument(
        "--latency",
        type=int,
        default=500,
        help="the server's latency per request, ms (default 500)",
    )
    parser.add_argument("--python", help="interpreter with evalmock installed")
    args = parser.parse_args(argv)
    python = lib.evalmock_python(args.python)
    result = measure(python, [int(n) for n in args.workers.split(",")], args.latency)
    facts = lib.machine_facts(python)
    (lib.RESULTS / "audit_workers.json").write_text(
        json.dumps({"machine": facts, "audit_workers": result}, indent=2)
    )
    print(json.dumps(result, indent=2))
    return 0 if all(run["same_verdict_and_findings"] for run in result["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
