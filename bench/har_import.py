"""`evalmock fixtures import --har` on the issue's largest recording: 392,000 distinct valid cases
(about 245 MiB of HAR), one walk of pages of 100. The import runs in a child process of its own:
its peak RSS, wall time, the peak disk use of its temporary store (the files it holds open in the
temporary folder, deleted or not), whether that folder is empty once it exits, and the data file's
size.

    .venv/bin/python bench/har_import.py                    # 392,000 cases, -o data.json
    .venv/bin/python bench/har_import.py --cases 40000 --suffix .yaml

Results go to bench/results/har_import.json; docs/hardening.md gives the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lib

sys.path.insert(0, str(lib.ROOT / "tests"))

from recording.har_files import entry  # the tests' HAR entry, as a browser saves one
from valid import valid_case  # the one builder of a valid case, from the document

MIB = 2**20
SERVICE = "https://api.example.test"
AGENT = "acme.drafting"
PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
PER_PAGE = 100
JSON = {"content-type": "application/json"}
NEWEST = datetime(2026, 11, 30, 12, tzinfo=UTC)


def page_entry(first: int, count: int, total: int) -> str:
    """The HAR entry of the page of cases `first` to `first + count`, newest first, as JSON."""
    cases = []
    for number in range(first, first + count):
        at = (NEWEST - timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%SZ")
        built = valid_case(
            id=f"case-{number:07d}",
            projectId=PROJECT,
            runId=f"run-{number:07d}-{number * 7919:032x}",
            addedAt=at,
            updatedAt=at,
        )
        # the trial's cases were a little longer than the example: 625 bytes of HAR each
        built["expect"]["answer"]["shouldSay"] += f" Case {number}: the 2026 review."
        cases.append(built)
    body: dict[str, Any] = {"data": cases, "hasMore": first + count < total}
    if body["hasMore"]:
        body["nextCursor"] = f"c{first + count}"
    text = json.dumps(body, separators=(",", ":"))
    cursor = f"&cursor=c{first}" if first else ""
    url = f"{SERVICE}/v1/agents/{AGENT}/test-set/cases?projectId={PROJECT}{cursor}"
    headers = {"authorization": "Bearer bench-token-0123456789"}
    recorded = entry(url, 200, text, headers=headers, response_headers=JSON)
    return json.dumps(recorded, separators=(",", ":"))


def har_text(total: int) -> Iterator[str]:
    yield '{"log":{"version":"1.2","creator":{"name":"bench","version":"1"},"entries":['
    for first in range(0, total, PER_PAGE):
        yield ("," if first else "") + page_entry(first, min(PER_PAGE, total - first), total)
    yield "]}}"


def _gone() -> contextlib.suppress:
    """Files and processes come and go while they are looked at: a vanished one counts nothing."""
    return contextlib.suppress(FileNotFoundError, ProcessLookupError)


def held_in(folder: Path, pid: int) -> int:
    """Bytes of the files in `folder`, and of those the process holds open there (deleted ones
    too: a store unlinked once opened lives on until it is closed)."""
    sizes: dict[tuple[int, int], int] = {}
    for path in folder.iterdir():
        with _gone():
            found = path.stat()
            sizes[(found.st_dev, found.st_ino)] = found.st_size
    with _gone():
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with _gone():
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(folder)):
                    found = os.stat(f"/proc/{pid}/fd/{fd}")
                    sizes[(found.st_dev, found.st_ino)] = found.st_size
    return sum(sizes.values())


def run_import(har: Path, out: Path, scratch: Path) -> dict[str, Any]:
    """One `evalmock fixtures import` in a child of its own, its temporary folder `scratch`."""
    command = [sys.executable, "-m", "evalmock", "fixtures", "import", "--har", str(har)]
    env = {**os.environ, "TMPDIR": str(scratch)}
    log_path = scratch.parent / "har-import.log"
    started = time.perf_counter()
    with open(log_path, "w") as said:
        child = subprocess.Popen([*command, "-o", str(out)], stdout=said, stderr=said, env=env)
        disk = 0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            disk = max(disk, held_in(scratch, child.pid))
            time.sleep(0.2)
    wall = time.perf_counter() - started
    lines = log_path.read_text(errors="replace").splitlines()
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "load_average": os.getloadavg()[0],
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "peak_store_mib": round(disk / MIB, 1),
        "left_in_tmp": sorted(p.name for p in scratch.iterdir()),
        "output_mib": round(out.stat().st_size / MIB, 1) if out.exists() else None,
        "said": [line for line in lines if "cases" in line][:3] or lines[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=392_000)
    parser.add_argument("--suffix", default=".json", choices=[".json", ".yaml"])
    args = parser.parse_args()
    lib.RESULTS.mkdir(exist_ok=True)
    work = lib.RESULTS / "har-import"
    shutil.rmtree(work, ignore_errors=True)
    scratch = work / "tmp"
    scratch.mkdir(parents=True)
    har = work / "cases.har"
    began = time.perf_counter()
    with open(har, "w") as file:
        file.writelines(har_text(args.cases))
    lib.log(f"  wrote {har.stat().st_size / MIB:.1f} MiB in {time.perf_counter() - began:.0f} s")
    results: dict[str, Any] = {
        "cases": args.cases,
        "har_mib": round(har.stat().st_size / MIB, 1),
        "output": "data" + args.suffix,
        **run_import(har, work / f"data{args.suffix}", scratch),
    }
    shutil.rmtree(work, ignore_errors=True)
    (lib.RESULTS / "har_import.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
