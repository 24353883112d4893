"""DigitalOcean's SDKs pointed at a live `evalmock serve`: the environment they would read a token
or an endpoint from is cleared, so that only what a test passes reaches them."""

from __future__ import annotations

import pytest

from evalmock.world.gradient import EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS

# What gradient and pydo read when an argument is left out; a developer's own must not leak in.
SDK_ENVIRONMENT = (
    "DIGITALOCEAN_ACCESS_TOKEN",
    "GRADIENT_MODEL_ACCESS_KEY",
    "GRADIENT_AGENT_ACCESS_KEY",
    "GRADIENT_AGENT_ENDPOINT",
    "GRADIENT_INFERENCE_ENDPOINT",
    "GRADIENT_KBASS_ENDPOINT",
    "GRADIENT_BASE_URL",
    "PYDO_AGENTS_ENDPOINT",
)

UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000"
# What the mock does not hold, as (uuid, version): each SDK must say "not found" of both.
MISSING = [
    pytest.param(UNKNOWN_UUID, None, id="unknown-uuid"),
    pytest.param(EXAMPLE_TEST_CASE, EXAMPLE_VERSIONS + 1, id="unknown-version"),
]


@pytest.fixture(autouse=True)
def _no_sdk_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SDK_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
