"""`evalmock contract --har` on hostile HAR files of 250 MiB: peak resident memory and wall time,
each audit in a child process of its own (its peak RSS its own).

    .venv/bin/python bench/har_memory.py             # 250 MiB each
    .venv/bin/python bench/har_memory.py --mib 50    # smaller, quicker

Shapes: `braces`, the log's comment a list of `{}` filling the file (one real entry after it);
`small-entries`, small real entries of the test-set operation, each judged (about 680 bytes
each, 380,000 in 250 MiB); `entry-comment`, one entry whose comment is a list of `{}` (refused);
`long-string`, one entry of the test-set operation whose body is one string filling the file (a
recorded download: cut as it is parsed, a gap).
Results go to bench/results/har_memory.json; docs/hardening.md gives the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lib

MIB = 2**20
SERVICE = "https://api.example.test"
CASES = "/v1/agents/acme.drafting/test-set/cases"
PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
BODY = json.dumps({"data": [], "hasMore": False})


def entry(number: int) -> dict[str, Any]:
    """A small real entry: a page of no cases, as a browser records it."""
    return {
        "startedDateTime": f"2026-11-30T10:{number // 60000 % 60:02d}:{number // 1000 % 60:02d}."
        f"{number % 1000:03d}Z",
        "time": 5,
        "request": {
            "method": "GET",
            "url": f"{SERVICE}{CASES}?projectId={PROJECT}",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "authorization", "value": "Bearer bench-token"}],
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": 0,
        },
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": [
                {"name": "content-type", "value": "application/json"},
                {"name": "x-request-id", "value": f"r-{number}"},
            ],
            "cookies": [],
            "content": {"size": len(BODY), "mimeType": "application/json", "text": BODY},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(BODY),
        },
    }


def braces(size: int, opening: str) -> Iterator[str]:
    """`opening`, then a list of `{}` to fill `size` bytes."""
    yield opening + "["
    block = "{}," * 10_000
    for _ in range(size // len(block)):
        yield block
    yield "{}]"


def shape(name: str, size: int) -> Iterator[str]:
    head = '{"log": {"version": "1.2", "creator": {"name": "bench", "version": "1"}, '
    if name == "braces":
        yield from braces(size, head + '"comment": ')
        yield ', "entries": [' + json.dumps(entry(0)) + "]}}"
    elif name == "long-string":
        one = entry(0)
        one["response"]["content"]["text"] = "@"
        before, after = json.dumps(one).split('"@"')
        block = '{\\"id\\": \\"case-1\\"}, ' * 2**14
        yield head + '"entries": [' + before + '"['
        for _ in range(size // len(block)):
            yield block
        yield '"' + after + "]}}"
    elif name == "entry-comment":
        yield from braces(size, head + '"entries": [{"comment": ')
        yield "}]}}"
    else:
        yield head + '"entries": ['
        written, number = 0, 0
        while written < size:
            text = ("," if number else "") + json.dumps(entry(number), separators=(",", ":"))
            written, number = written + len(text), number + 1
            yield text
        yield "]}}"


def audit(har: Path) -> dict[str, Any]:
    """One `evalmock contract --har` in a child of its own, so that its peak RSS is its own."""
    command = [
        sys.executable,
        "-c",
        "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
        "used = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(code, used.ru_maxrss, used.ru_utime + used.ru_stime)",
        *(sys.executable, "-m", "evalmock", "contract", "--har", str(har), "--quiet"),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    code, peak, cpu = done.stdout.split()[-3:]
    return {
        "exit": int(code),
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(float(cpu), 1),
        "peak_rss_mib": round(int(peak) / 1024, 1),
        "said": done.stderr.strip().splitlines()[-1:] or done.stdout.strip().splitlines()[-3:-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mib", type=int, default=250)
    parser.add_argument(
        "--shapes", default="braces,entry-comment,small-entries,long-string", help="comma-separated"
    )
    args = parser.parse_args()
    results: dict[str, Any] = {"mib": args.mib}
    lib.RESULTS.mkdir(exist_ok=True)
    for name in args.shapes.split(","):
        har = lib.RESULTS / f"har-memory-{name}.har"
        with open(har, "w") as file:
            file.writelines(shape(name, args.mib * MIB))
        results[name] = {"har_mib": round(har.stat().st_size / MIB, 1), **audit(har)}
        har.unlink()
        lib.log(f"  {name}: {results[name]}")
    (lib.RESULTS / "har_memory.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
