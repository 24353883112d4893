"""The redactor behind a gateway that sets new cookies on every answer (AWS ALB's AWSALB and
AWSALBCORS): what learning one answer's secrets and redacting its HAR entry costs as the secrets
learned grow, the worst single answer, and the memory each secret holds.

    # this checkout, 1,000 to 50,000 answers
    .venv/bin/python bench/redactor.py
    # another revision's code, fewer answers
    .venv/bin/python bench/redactor.py --src ../old/src --answers 1000,10000

Each answer is what `evalmock proxy --har` does with one exchange: learn its URL and headers (two
Set-Cookie values new on every answer, the bearer token, the Cookie the client sent back), then
record it in the HAR spool, redacted (its headers and its body, a 25-case page, 14 KB of JSON). At
the end the HAR file is written, as at the proxy's stop or SIGUSR1, every entry read again for the
secrets learned after it. Times are process CPU; one process, nothing else of ours running. Results
go to bench/results/redactor-LABEL.json; docs/maintainers/benchmarks.md explains the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lib


def page_body() -> str:
    from evalmock.world import CaseQuery, World

    world = World(cases=100)
    agent, project = next((p.agent_id, p.project_id) for p in world.project_facts())
    page = world.page(CaseQuery(agent, project), None, 25)
    return json.dumps({"data": page.cases, "hasMore": True}, separators=(",", ":"))


def run(answers: list[int]) -> dict[str, Any]:
    from evalmock.harness.secrets.redactor import Redactor
    from evalmock.proxy.forwarded import Forwarded
    from evalmock.proxy.recorder import HarRecorder

    body = page_body().encode()
    redactor = Redactor(token="demo-user-token-0001")
    recorder = HarRecorder(redactor)
    url = "http://upstream/v1/agents/example/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0&limit=25"
    previous = (secrets.token_urlsafe(96), secrets.token_urlsafe(96))
    bands: list[dict[str, Any]] = []
    done, started_rss = 0, lib.rss_mib(os.getpid())
    for target in answers:
        costs: list[float] = []
        while done < target:
            alb, cors = secrets.token_urlsafe(96), secrets.token_urlsafe(96)
            request = [
                ("authorization", "Bearer demo-user-token-0001"),
                ("accept", "application/json"),
                ("cookie", f"AWSALB={previous[0]}; AWSALBCORS={previous[1]}"),
            ]
            response = [
                ("content-type", "application/json"),
                ("content-length", str(len(body))),
                ("set-cookie", f"AWSALB={alb}; Expires=Tue, 08 Dec 2026 10:00:00 GMT; Path=/"),
                ("set-cookie", f"AWSALBCORS={cors}; Path=/; SameSite=None; Secure"),
            ]
            forwarded = Forwarded(
                datetime.now(UTC),
                "GET",
                url,
                "/v1/agents/example/test-set/cases",
                request,
                200,
                "OK",
                "HTTP/1.1",
                response,
                body,
                len(body),
            )
            begun = time.process_time()
            # as the proxy's session does before anything else
            redactor.learn_exchange(url, request, response)
            recorder.record(forwarded)
            costs.append(time.process_time() - begun)
            previous, done = (alb, cors), done + 1
        bands.append(
            {
                "answers": target,
                "secrets_learned": 2 * target + 1,
                "mean_us_per_answer": round(statistics.fmean(costs) * 1e6),
                "median_us_per_answer": round(statistics.median(costs) * 1e6),
                "worst_answer_ms": round(max(costs) * 1e3, 1),
                "rss_growth_mib": round(lib.rss_mib(os.getpid()) - started_rss, 1),
            }
        )
        print(json.dumps(bands[-1]), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        begun = time.process_time()
        # every spooled entry read again, for secrets learned after it
        recorder.write(Path(folder) / "traffic.har")
        written = time.process_time() - begun
    recorder.close()
    print(json.dumps({"har_write_s": round(written, 1)}), flush=True)
    return {
        "body_bytes": len(body),
        "bands": bands,
        "har_write_s": round(written, 1),
        "kib_per_secret": round(
            bands[-1]["rss_growth_mib"] * 1024 / bands[-1]["secrets_learned"], 2
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--answers",
        default="1000,10000,50000",
        help="answers after which a band's figures are taken (comma-separated, growing)",
    )
    parser.add_argument(
        "--src", type=Path, help="import evalmock from this src folder (another revision's)"
    )
    parser.add_argument("--label", default="this checkout")
    args = parser.parse_args()
    if args.src is not None:
        sys.path.insert(0, str(args.src.resolve()))

    answers = [int(part) for part in args.answers.split(",")]
    result = {"label": args.label, **run(answers)}
    lib.RESULTS.mkdir(parents=True, exist_ok=True)
    out = lib.RESULTS / f"redactor-{args.label.replace(' ', '-')}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
