"""`evalmock contract` of a mock whose lists move (`evalmock serve --churn 7`): cases arrive and
retire while the audit walks, as on a service people use, and the audit still finds it conforming,
at the default level and with --strict."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from evalmock.cli import main

FAST = ["--max-examples", "3", "--quiet"]


@pytest.fixture(scope="module")
def churning_server(live_server_factory: Callable[..., Any]) -> Iterator[Any]:
    """`evalmock serve --churn 7`: a case arrives every seven requests of a list, as in issue
    reports of live services; its targets file holds the counts at start."""
    with live_server_factory("--churn", "7") as server:
        yield server


@pytest.mark.parametrize("level", [[], ["--strict"]], ids=["default", "strict"])
def test_the_audit_of_a_churning_mock_conforms(
    churning_server: Any, level: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "contract",
            "--base-url",
            churning_server.base_url,
            "--targets",
            str(churning_server.targets_path),
            *level,
            *FAST,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "CONFORMS" in out
