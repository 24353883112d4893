"""The documents the mock serves (and Swagger UI shows to frontend developers) speak of the APIs
only: no audit vocabulary (levels, profiles, commands), which the files under openapi/ keep."""

from __future__ import annotations

import json

import httpx
import pytest

from evalmock.contract.documents import APIS, LEVEL_MARK, QUERY_FACTS

# What belongs to the audit, never to a served document.
HARNESS_WORDS = (
    "x-evalmock",
    "evalmock contract",
    "--profile",
    "digitalocean-live",
    "--strict",
    "inferred",
)


@pytest.mark.parametrize("base", [api.base_path for api in APIS.values()])
@pytest.mark.parametrize("name", ["openapi.json", "openapi.yaml"])
def test_a_served_document_carries_no_harness_vocabulary(
    client: httpx.Client, base: str, name: str
) -> None:
    served = client.get(f"{base}/{name}")
    assert served.status_code == 200
    text = served.text.lower()
    assert [word for word in HARNESS_WORDS if word in text] == []


def test_the_files_keep_what_the_audit_reads() -> None:
    whole = json.dumps([api.spec for api in APIS.values()])
    assert LEVEL_MARK in whole and QUERY_FACTS in whole
