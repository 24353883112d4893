"""`evalmock proxy --server granian`: the same outputs on SIGUSR1 and at the end as under uvicorn,
the same answers."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from shared import needs_granian

from .test_command import TOO_LONG, _entries, _until, proxy_process

pytestmark = needs_granian


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_outputs_on_demand_and_at_the_end_under_granian(
    tmp_path: Path, broken: str, stop: int
) -> None:
    outputs = ["--report", "report.md", "--har", "traffic.har", "--server", "granian"]
    with proxy_process(tmp_path, broken, *outputs) as (process, base_url):
        answer = httpx.get(base_url + TOO_LONG)
        assert "evalmock-violations" in answer.headers
        # never a second one
        assert answer.headers.get_list("server") == answer.headers.get_list("server")[:1]
        process.send_signal(signal.SIGUSR1)
        _until(lambda: all((tmp_path / name).exists() for name in ("report.md", "traffic.har")))
        on_demand = _entries(tmp_path / "traffic.har")
        httpx.get(base_url + TOO_LONG)
        process.send_signal(stop)
        out, err = process.communicate(timeout=30)

    assert process.returncode == 1, err
    assert "VIOLATIONS" in out and "page_holds_at_most_limit" in out
    assert "Traceback" not in err
    assert _entries(tmp_path / "traffic.har") == on_demand + 1
