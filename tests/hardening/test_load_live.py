"""A short, bounded load of mixed requests on the live server: every answer a 200, no connection
errors."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import httpx

from evalmock.contract.targets import load_targets

from .answers import AUTH, CASES, EVALUATION, EXAMPLE_PROJECT

CONNECTIONS = 16
SECONDS = 5.0
MAX_REQUESTS_PER_CONNECTION = 2_000
FILTERS = (
    {},
    {"include": "retired"},
    {"kind": "hand"},
    {"kind": "correction", "include": "retired"},
)
LIMITS = (5, 25, 100)


def walk_requests(base_url: str, targets_path: Any) -> list[tuple[str, dict[str, str]]]:
    """Page walks through real cursors under several filters and limits, plus DigitalOcean test
    cases."""
    targets = load_targets(targets_path)
    requests: list[tuple[str, dict[str, str]]] = []
    lists = [(CASES, EXAMPLE_PROJECT)] + [
        (f"/v1/agents/{p.agent_id}/test-set/cases", p.project_id) for p in targets.projects[:4]
    ]
    with httpx.Client(base_url=base_url, timeout=10) as client:
        for index, (path, project) in enumerate(lists):
            params = {
                "projectId": project,
                **FILTERS[index % len(FILTERS)],
                "limit": str(LIMITS[index % 3]),
            }
            for _ in range(3):
                request = f"{path}?{httpx.QueryParams(params)}"
                requests.append((request, AUTH))
                page = client.get(request, headers=AUTH).json()
                if "nextCursor" not in page:
                    break
                params = {**params, "cursor": page["nextCursor"]}
    requests += [
        (f"/v2/gen-ai/evaluation_test_cases/{case.uuid}", AUTH) for case in targets.test_cases
    ]
    requests.append((EVALUATION + "?evaluation_test_case_version=1", AUTH))
    return requests


def test_sixteen_connections_for_five_seconds_get_only_200s(live_server: Any) -> None:
    requests = walk_requests(live_server.base_url, live_server.targets_path)
    statuses: Counter[int | str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def hammer(offset: int) -> None:
        seen: Counter[int | str] = Counter()
        with httpx.Client(base_url=live_server.base_url, timeout=15) as client:
            for count in range(MAX_REQUESTS_PER_CONNECTION):
                if time.monotonic() > deadline:
                    break
                path, headers = requests[(offset + count) % len(requests)]
                try:
                    seen[client.get(path, headers=headers).status_code] += 1
                except httpx.HTTPError as error:
                    seen[type(error).__name__] += 1
        with lock:
            statuses.update(seen)

    threads = [threading.Thread(target=hammer, args=(i * 7,)) for i in range(CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 60)
    assert not any(thread.is_alive() for thread in threads)
    assert set(statuses) == {200}, statuses
    assert statuses[200] >= CONNECTIONS, statuses
