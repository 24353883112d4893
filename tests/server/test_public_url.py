"""The banner names the URLs a user would open: never 0.0.0.0, and EVALMOCK_PUBLIC_URL where the
port is mapped."""

from __future__ import annotations

import pytest

from evalmock.environment import PUBLIC_URL
from evalmock.server.banner import banner
from evalmock.server.settings import ServerSettings
from evalmock.world import World


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=42, cases=10)


def test_a_server_on_every_interface_is_announced_on_loopback(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PUBLIC_URL, raising=False)
    text = banner(ServerSettings(host="0.0.0.0", port=8080), world)
    assert "0.0.0.0" not in text
    assert "http://127.0.0.1:8080/v1/ui/" in text


def test_the_public_url_replaces_where_the_server_listens(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLIC_URL, "http://127.0.0.1:9000/")
    text = banner(ServerSettings(host="0.0.0.0", port=8080), world)
    assert ":8080" not in text
    assert "http://127.0.0.1:9000/v1/ui/" in text
    assert "curl 'http://127.0.0.1:9000/v2/gen-ai/evaluation_test_cases/" in text
