"""The one builder of a valid case and of a valid test-case version: the documents' own examples,
copied, with what a test changes. A field the page adds reaches every test through its example."""

from __future__ import annotations

import copy
from typing import Any

from evalmock.contract.operations import operation


def _examples(api: str) -> dict[str, Any]:
    response = operation(api).response_for(200)
    assert response is not None and response.examples, f"the {api} document has no 200 examples"
    return response.examples


def _case_example(kind: str, retired: bool) -> dict[str, Any]:
    cases = [case for example in _examples("test-set").values() for case in example["data"]]
    found = [c for c in cases if c["kind"] == kind and ("retired" in c) == retired]
    assert found, f"the test-set document's examples hold no {'retired ' * retired}{kind} case"
    return found[0]


def valid_case(kind: str = "hand", **changes: Any) -> dict[str, Any]:
    """A valid active TestSetCase of `kind` (`hand` or `correction`): the page's example of that
    kind, with `changes`."""
    return {**copy.deepcopy(_case_example(kind, retired=False)), **changes}


def valid_retired_case(**changes: Any) -> dict[str, Any]:
    """A valid retired TestSetCase: the page's example, with `changes`."""
    return {**copy.deepcopy(_case_example("hand", retired=True)), **changes}


def retirement(at: str) -> dict[str, Any]:
    """A valid `retired` object at `at`: the page's example's, retired then."""
    return {**valid_retired_case()["retired"], "at": at}


def valid_version(**changes: Any) -> dict[str, Any]:
    """A valid apiEvaluationTestCase: DigitalOcean's example, with `changes`."""
    (example, *_) = _examples("gradient").values()
    version = copy.deepcopy(example["evaluation_test_case"])
    version.update(changes)
    return version


def changed(value: dict[str, Any], path: str, new: Any) -> dict[str, Any]:
    """A deep copy of `value` with the dotted `path` set to `new` (or removed when `new` is ...)."""
    result = copy.deepcopy(value)
    target = result
    *parents, last = path.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if new is ...:
        del target[int(last) if isinstance(target, list) else last]
    else:
        target[int(last) if isinstance(target, list) else last] = new
    return result
