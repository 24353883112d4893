"""Schemathesis fuzzing of a running server, positive and negative, both APIs, until N requests;
JSON to --output.

Run by bench/run.py with the interpreter that has evalmock and Schemathesis:
    python bench/fuzz.py --base-url http://127.0.0.1:PORT --targets FILE --requests 10000 \\
        --output fuzz.json
Counts every request Schemathesis sends (its `after_call` hook), every 5xx, every body that looks
like a stack trace, and every failed check (undocumented status, content type, header or body;
negative data accepted...).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any

from schemathesis.engine import Status, events, from_schema

from evalmock.contract.documents import APIS
from evalmock.contract.targets import Targets, load_targets
from evalmock.harness.checks.open_answers import refusal_left_open
from evalmock.harness.checks.policy import LIVE_PROFILE, Policy
from evalmock.harness.run.schemathesis_schema import known_good_case_hook, load_schema

STRICTEST = Policy(strict=True, profile=LIVE_PROFILE)
TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/')


class Tally:
    """What the server answered, across every run."""

    def __init__(self) -> None:
        self.requests = 0
        self.statuses: collections.Counter[int] = collections.Counter()
        self.server_errors: list[str] = []
        self.tracebacks: list[str] = []
        self.failures: dict[tuple[str, str, str], str] = {}

    def on_response(self, case: Any, response: Any) -> None:
        self.requests += 1
        self.statuses[response.status_code] += 1
        if response.status_code >= 500 and len(self.server_errors) < 20:
            self.server_errors.append(f"{response.status_code} {case.as_curl_command()}")
        text = response.text if isinstance(response.text, str) else ""
        if any(marker in text for marker in TRACEBACK_MARKERS) and len(self.tracebacks) < 20:
            self.tracebacks.append(case.as_curl_command())


def schema_for(
    api: str, base_url: str, targets: Targets, seed: int, max_examples: int, tally: Tally
) -> Any:
    """The audit's own Schemathesis configuration (every rule, strict and live: our mock keeps them
    all)."""
    schema = load_schema(
        api,
        STRICTEST,
        base_url=base_url,
        token=targets.token or "demo-user",
        seed=seed,
        max_examples=max_examples,
    )
    schema.hook(known_good_case_hook(api, targets))

    @schema.hook
    def after_call(context: Any, case: Any, response: Any) -> None:
        tally.on_response(case, response)

    return schema


def _left_open(api: str, check: str, recorder: Any, case_id: str, targets: Targets) -> bool:
    """A positive request's 400 or 404 that the audit lets pass too (a cursor; an agent or project
    not listed)."""
    case = recorder.cases[case_id].value
    interaction = recorder.interactions.get(case_id)
    status = (
        interaction.response.status_code
        if interaction is not None and interaction.response
        else None
    )
    return check == "positive_data_acceptance" and refusal_left_open(
        api, status, case.query or {}, case.path_parameters or {}, targets
    )


def run_once(schema: Any, tally: Tally, deadline: float, api: str, targets: Targets) -> str:
    stop_reason = "completed"
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            for case_id, nodes in recorder.checks.items():
                for node in nodes:
                    if (
                        node.status == Status.FAILURE
                        and node.failure_info
                        and not _left_open(api, node.name, recorder, case_id, targets)
                    ):
                        failure = node.failure_info.failure
                        key = (failure.code or "", failure.title, str(failure.message)[:300])
                        tally.failures.setdefault(key, node.failure_info.code_sample)
        elif isinstance(event, (events.NonFatalError, events.FatalError)):
            key = ("error", type(event).__name__, str(getattr(event, "value", event))[:300])
            tally.failures.setdefault(key, "")
        if time.monotonic() > deadline:
            stop_reason = "time limit"
            break
    return stop_reason


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--targets", required=True)
    parser.add_argument(
        "--requests", type=int, default=10_000, help="keep fuzzing until this many requests"
    )
    parser.add_argument("--max-seconds", type=int, default=600)
    parser.add_argument("--max-examples", type=int, default=500, help="per API, phase and run")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    targets = load_targets(args.targets)
    tally = Tally()
    started = time.monotonic()
    deadline = started + args.max_seconds
    runs = []
    # bounded by --requests and --max-seconds well before the seeds run out
    for seed in range(1, 1000):
        for api in APIS:
            before = tally.requests
            reason = run_once(
                schema_for(api, args.base_url, targets, seed, args.max_examples, tally),
                tally,
                deadline,
                api,
                targets,
            )
            runs.append(
                {"api": api, "seed": seed, "requests": tally.requests - before, "stop": reason}
            )
            print(
                f"fuzz seed {seed} {api}: {tally.requests - before} requests, total "
                f"{tally.requests}",
                flush=True,
            )
        if tally.requests >= args.requests or time.monotonic() > deadline:
            break
    failures = [
        {"code": k[0], "title": k[1], "message": k[2], "reproduce": v}
        for k, v in tally.failures.items()
    ]
    report = {
        "requests": tally.requests,
        "seconds": round(time.monotonic() - started, 1),
        "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
        "server_errors": len([s for s in tally.statuses.elements() if s >= 500]),
        "server_error_examples": tally.server_errors,
        "traceback_bodies": tally.tracebacks,
        "failed_checks": len(failures),
        "failures_detail": failures,
        "failures": [f"{f['code']} {f['title']}: {f['message'][:160]}" for f in failures],
        "runs": runs,
        "targets": {
            "requests_ge_target": tally.requests >= args.requests,
            "zero_5xx": not any(s >= 500 for s in tally.statuses),
            "zero_nonconforming": not failures and not tally.tracebacks,
        },
    }
    Path(args.output).write_text(json.dumps(report, indent=2))
    print(
        json.dumps(
            {k: v for k, v in report.items() if k not in ("runs", "failures_detail")}, indent=2
        )
    )
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
