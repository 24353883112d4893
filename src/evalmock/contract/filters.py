"""The filters of the test-set list, each read once from its parameter's `x-evalmock-query`: how a
request's value is read, what a cursor binds, and which cases it lets through.

One declaration serves the world (`CaseQuery`), the cursor sealer, the harness's checks and walks,
the proxy and the tests: a new filter is its parameter in `openapi/agent-test-set.yaml`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalmock.contract.documents import QUERY_FACTS
from evalmock.contract.operations import operation

# The list the filters narrow (the only API with filters).
LIST_API = "test-set"


@dataclass(frozen=True)
class Filter:
    """One query parameter that selects cases of the list, as its `x-evalmock-query` declares it.

    `case-field` names the case field it compares. How a case matches the value read:
    - `set-of: [a, b]` (form "set"): the field is one of the members named (left out: all of them);
    - `present-only-with: v`: a case holding the field is listed only when the value is `v`
      (`include=retired`: a retired case only with it);
    - `letter-case: any`: the field equals the value in either letter case (a UUID);
    - otherwise the field equals the value; left out, every case matches.
    """

    name: str  # the parameter's name on the wire
    field: str  # the case field it compares
    members: tuple[str, ...] | None = None  # `set-of`
    present_only_with: str | None = None
    any_case: bool = False  # `letter-case: any`
    list_key: bool = False  # `list-key`: it names the list itself (the world keys lists by it)
    narrows: bool = False
    binds: bool = False  # `cursor-binds`
    empty_open: bool = False  # `empty-value: open`: an empty value reads as left out
    case_rule: str | None = None  # the rule judging each listed case against it, when named

    @property
    def form(self) -> str:
        """How a cursor binds it: "set" (the members, in any order) or "value"."""
        return "set" if self.members is not None else "value"

    def read(self, sent: str | None) -> Any:
        """What the value sent stands for (JSON-ready, as a cursor binds it): the members named,
        sorted, once each; whether `present-only-with`'s value was sent; the value in lower case
        (`letter-case: any`); else the value as sent. Left out (or empty, when open): the members,
        False, or None."""
        if not sent and (sent is None or self.empty_open):
            sent = None
        if self.members is not None:
            named = set(self.members) if sent is None else set(sent.split(","))
            if not named <= set(self.members):
                return sent  # it names other than the members: no such set
            return tuple(member for member in sorted(self.members) if member in named)
        if self.present_only_with is not None:
            return sent == self.present_only_with
        if sent is not None and self.any_case:
            return sent.lower()
        return sent

    def admits(self, case: Mapping[str, Any], value: Any) -> bool:
        """Whether a listed case matches the filter's value as `read` gives it."""
        if self.present_only_with is not None:
            return bool(value) or self.field not in case
        if value is None:
            return True
        found = case.get(self.field)
        if self.members is not None:
            # a value no set reads as (a 200 to a malformed kind) is still the members it names
            named = value if isinstance(value, tuple) else tuple(str(value).split(","))
            return found in named
        if self.any_case and isinstance(found, str):
            return found.lower() == value
        return found == value


def declared_filter(name: str, facts: Mapping[str, Any]) -> Filter:
    """A filter as a parameter's `x-evalmock-query` declares it (`case-field` is required)."""
    members = facts.get("set-of")
    return Filter(
        name=name,
        field=str(facts["case-field"]),
        members=None if members is None else tuple(str(m) for m in members),
        present_only_with=facts.get("present-only-with"),
        any_case=facts.get("letter-case") == "any",
        list_key=facts.get("list-key") is True,
        narrows=facts.get("narrows") is True,
        binds=facts.get("cursor-binds") is True,
        empty_open=facts.get("empty-value") == "open",
        case_rule=facts.get("case-rule"),
    )


@functools.cache
def filters(api: str = LIST_API) -> dict[str, Filter]:
    """Every query parameter with a `case-field`, by name, in the document's order."""
    return {
        name: declared_filter(name, parameter[QUERY_FACTS])
        for name, parameter in operation(api).query_parameters().items()
        if "case-field" in parameter.get(QUERY_FACTS, {})
    }


def narrowing(api: str = LIST_API) -> tuple[Filter, ...]:
    """The filters that narrow a list (the list's key aside), in the document's order."""
    return tuple(f for f in filters(api).values() if f.narrows)


def list_key(api: str = LIST_API) -> Filter:
    """The parameter naming the list itself (`list-key`: the project)."""
    return next(f for f in filters(api).values() if f.list_key)


def by_field(field: str, api: str = LIST_API) -> Filter | None:
    """The filter comparing this case field, if any."""
    return next((f for f in filters(api).values() if f.field == field), None)
