"""The registry's documents: each parsed once, into what PyYAML's pure-Python safe loader reads from
the file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from evalmock.contract.documents import APIS, ApiDocument, load_document


@pytest.mark.parametrize("api", APIS.values(), ids=list(APIS))
def test_a_document_loads_as_the_safe_loader_reads_it(api: ApiDocument) -> None:
    expected = yaml.load(api.path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    loaded = load_document(api.path)
    assert loaded == expected
    # the same order, so the same openapi.json bytes
    assert list(_keys(loaded)) == list(_keys(expected))


@pytest.mark.parametrize("api", APIS.values(), ids=list(APIS))
def test_a_document_is_parsed_once(api: ApiDocument) -> None:
    assert api.spec is api.spec


def _keys(node: object, where: str = "") -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield f"{where}/{key}"
            yield from _keys(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _keys(item, f"{where}/{index}")
