"""`evalmock contract --har` on a long browser recording: wall time and peak resident memory for a
HAR of N real test-set pages (walks of `evalmock serve`, followed by their cursors), each answer
setting two new ALB cookies.

    # 4,000 pages, this checkout
    .venv/bin/python bench/har_audit.py
    # another revision's code, side by side
    .venv/bin/python bench/har_audit.py --pages 1000 --src ../old/src

The HAR is written once (bench/results/har-audit.har, about 17 KB a page) and audited by each code
given, in alternating trials. Results go to bench/results/har_audit.json;
docs/maintainers/benchmarks.md explains the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import Any

import lib


def entry(
    url: str,
    status: int,
    headers: dict[str, str],
    text: str,
    sent: tuple[str, str],
    set_now: tuple[str, str],
) -> dict[str, Any]:
    """A HAR entry as a browser's developer tools write it, with the cookies the gateway rotates."""
    query = urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)
    return {
        "startedDateTime": "2026-12-02T00:00:00.000Z",
        "time": 5,
        "cache": {},
        "timings": {"send": 0, "wait": 5, "receive": 0},
        "request": {
            "method": "GET",
            "url": url,
            "httpVersion": "HTTP/1.1",
            "headersSize": -1,
            "bodySize": 0,
            "headers": [
                {"name": "Authorization", "value": f"Bearer {lib.TOKEN}"},
                {"name": "Cookie", "value": f"AWSALB={sent[0]}; AWSALBCORS={sent[1]}"},
            ],
            "queryString": [{"name": name, "value": value} for name, value in query],
            "cookies": [
                {"name": "AWSALB", "value": sent[0]},
                {"name": "AWSALBCORS", "value": sent[1]},
            ],
        },
        "response": {
            "status": status,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(text),
            "headers": [{"name": name, "value": value} for name, value in headers.items()]
            + [
                {"name": "Set-Cookie", "value": f"AWSALB={set_now[0]}; Path=/"},
                {"name": "Set-Cookie", "value": f"AWSALBCORS={set_now[1]}; Path=/; Secure"},
            ],
            "cookies": [
                {"name": "AWSALB", "value": set_now[0]},
                {"name": "AWSALBCORS", "value": set_now[1]},
            ],
            "content": {"size": len(text), "mimeType": "application/json", "text": text},
        },
    }


def record(server: lib.Server, targets: dict[str, Any], pages: int) -> list[dict[str, Any]]:
    """Walks of 25-case pages over every project, up to 8 pages each, until `pages` are recorded."""
    projects = [(p["agent_id"], p["project_id"]) for p in targets["test_set"]["projects"]]
    entries: list[dict[str, Any]] = []
    cookies = (secrets.token_urlsafe(96), secrets.token_urlsafe(96))
    walk = 0
    while len(entries) < pages:
        agent, project = projects[walk % len(projects)]
        walk += 1
        cursor = None
        for _ in range(8):
            query = {"projectId": project, "limit": "25", **({"cursor": cursor} if cursor else {})}
            url = f"{server.base}/v1/agents/{agent}/test-set/cases?{urllib.parse.urlencode(query)}"
            status, body = lib.get(url)
            text = body.decode()
            fresh = (secrets.token_urlsafe(96), secrets.token_urlsafe(96))
            entries.append(
                entry(url, status, {"content-type": "application/json"}, text, cookies, fresh)
            )
            cookies, cursor = fresh, json.loads(text).get("nextCursor")
            if not cursor or len(entries) >= pages:
                break
    return entries


def audit(python: str, har: Path, base: str, targets: Path, src: Path | None) -> dict[str, float]:
    """One `evalmock contract --har` in a child of its own, so that its peak RSS is its own."""
    environment = {**os.environ, **({"PYTHONPATH": str(src.resolve())} if src else {})}
    command = [
        python,
        "-c",
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        python,
        "-m",
        "evalmock",
        "contract",
        "--har",
        str(har),
        "--base-url",
        base,
        "--targets",
        str(targets),
        "--quiet",
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=1800)
    wall = time.perf_counter() - started
    if "judged" not in done.stdout:
        raise RuntimeError(
            f"the audit printed no traffic note: {done.stdout[-1500:]} {done.stderr[-1500:]}"
        )
    return {"wall_s": round(wall, 2), "peak_rss_mib": round(int(done.stdout.split()[-1]) / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=4000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument(
        "--src",
        type=Path,
        action="append",
        default=[],
        help="also audit with the evalmock of this src folder (another revision's), side by side",
    )
    args = parser.parse_args()
    python = lib.evalmock_python(None)
    targets_path = lib.RESULTS / "har-audit-targets.toml"
    server = lib.start_evalmock(python, "har-audit", extra=["--write-targets", str(targets_path)])
    try:
        har = lib.RESULTS / "har-audit.har"
        entries = record(server, lib.read_targets(targets_path), args.pages)
        har.write_text(
            json.dumps(
                {
                    "log": {
                        "version": "1.2",
                        "creator": {"name": "bench", "version": "1"},
                        "entries": entries,
                    }
                }
            )
        )
        lib.log(f"{len(entries)} pages, {har.stat().st_size / 2**20:.1f} MiB of HAR")
        codes: dict[str, Path | None] = {
            "this checkout": None,
            **{str(src): src for src in args.src},
        }
        trials: dict[str, list[dict[str, float]]] = {label: [] for label in codes}
        for _ in range(args.trials):
            for label, src in codes.items():
                trials[label].append(audit(python, har, server.base, targets_path, src))
                lib.log(f"  {label}: {trials[label][-1]}")
    finally:
        lib.stop(server.proc)
    result = {
        "pages": len(entries),
        "har_mib": round(har.stat().st_size / 2**20, 1),
        "codes": {
            label: {
                "median_wall_s": statistics.median(t["wall_s"] for t in runs),
                "median_peak_rss_mib": statistics.median(t["peak_rss_mib"] for t in runs),
                "trials": runs,
            }
            for label, runs in trials.items()
        },
    }
    (lib.RESULTS / "har_audit.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["codes"], indent=1))


if __name__ == "__main__":
    main()
