"""The one accumulator of a recording: fed answer by answer (by a HAR file's reader or by the proxy
as traffic passes), it keeps the lists, cases and test case versions seen, and what it did not read
and why."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalmock.defaults import DEFAULT_MAX_ANSWER_BYTES
from evalmock.recording.answers import Answer, Source
from evalmock.recording.lists import Filters, RecordedList
from evalmock.recording.spool import Store
from evalmock.recording.test_cases import RecordedTestCase
from evalmock.world.data_files import unservable

MAX_DEPTH = 64  # a recorded body nested deeper is no page of the APIs
# The most bytes of one answer's body a recording reads (as the audit reads no longer one); a longer
# body is left out, never decoded or parsed.
MAX_BODY_BYTES = DEFAULT_MAX_ANSWER_BYTES
# The most bytes of one case or version, as compact JSON: a page of 100 cases at the most a page of
# the API holds is far less; a longer one is left out.
MAX_ITEM_BYTES = 256 * 2**10
MAX_NAMED = 20  # answers left out, kept one by one to be named; more are counted


class Refusals:
    """What was left out, and why: the first MAX_NAMED kept to be named, the rest counted (a
    recording of hostile traffic may leave out every one of millions)."""

    def __init__(self) -> None:
        self.named: list[Refused] = []
        self.count = 0

    def append(self, refused: Refused) -> None:
        self.count += 1
        if len(self.named) < MAX_NAMED:
            self.named.append(refused)

    def __iter__(self) -> Iterator[Refused]:
        return iter(self.named)

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class Refused:
    """An answer (or a case or version of one) left out of the data file, and why."""

    source: Source
    reason: str


@dataclass
class Recording:
    """Everything the answers fed so far showed."""

    store: Store = field(default_factory=Store)
    lists: dict[tuple[str, str], RecordedList] = field(default_factory=dict)
    test_cases: dict[str, RecordedTestCase] = field(default_factory=dict)
    other: Counter[str] = field(default_factory=Counter)  # host -> entries of other paths
    not_success: int = 0  # answers of the APIs that were not 2xx
    refused: Refusals = field(default_factory=Refusals)
    fed: int = 0

    def close(self) -> None:
        self.store.close()

    def feed(self, answer: Answer) -> None:
        self.fed += 1
        agent, uuid = answer.list_agent(), answer.test_case_uuid()
        if agent is None and uuid is None:
            self.other[answer.host] += 1
            return
        if uuid is not None and answer.status == 404:
            self._absent(uuid.lower(), answer)
        if not 200 <= answer.status < 300:
            self.not_success += 1
            return
        body = answer.unread or _json_object(answer.body)
        if isinstance(body, str):
            self.refused.append(Refused(answer.source, body))
        elif agent is not None:
            self._list_page(agent, answer, body)
        elif uuid is not None:
            self._test_case(uuid.lower(), answer, body)

    def _list_page(self, agent: str, answer: Answer, body: dict[str, Any]) -> None:
        query = _first_values(answer.query())
        problem = _page_problem(body) or (
            None if query.get("projectId") else "the request names no projectId"
        )
        if problem:
            self.refused.append(Refused(answer.source, problem))
            return
        project = query["projectId"].lower()
        filters = Filters.of(query)
        recorded = self.lists.get((agent, project))
        if recorded is None:
            recorded = RecordedList(agent, project, self.store, len(self.lists))
            self.lists[(agent, project)] = recorded
        cases = []
        for index, case in enumerate(body["data"]):
            text = self._held(case, answer.source, f"/data/{index}")
            cases.append((case, text))
        recorded.page(filters, query.get("cursor"), cases, body, answer.source, self.fed)

    def _held(self, item: dict[str, Any], source: Source, where: str) -> str | None:
        """A case's or version's JSON to keep, or None when it is left out (refused, saying why)."""
        problem = unservable(item)
        text = None
        if problem is None:
            text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            if len(text.encode("utf-8")) > MAX_ITEM_BYTES:
                problem = f"{len(text.encode('utf-8')):,} bytes of JSON, more than the " + (
                    f"{MAX_ITEM_BYTES:,} a recording keeps of one item"
                )
        if problem is not None:
            self.refused.append(Refused(source, f"{where}: {problem}; left out"))
            return None
        return text

    def _test_case(self, uuid: str, answer: Answer, body: dict[str, Any]) -> None:
        version = body.get("evaluation_test_case")
        number = version.get("version") if isinstance(version, dict) else None
        if not isinstance(version, dict):
            problem = "expected an object with evaluation_test_case, an object"
        elif isinstance(number, bool) or not isinstance(number, int):
            problem = f"expected the test case's version, an integer, got {number!r}"
        else:
            problem = None
        if problem:
            self.refused.append(Refused(answer.source, problem))
            return
        asked = _asked_version(answer)
        if asked == "malformed":
            self.refused.append(Refused(answer.source, "the version asked for is no integer"))
            return
        text = self._held(version, answer.source, "/evaluation_test_case")
        if text is None:
            return
        recorded = self.test_cases.get(uuid)
        if recorded is None:
            recorded = RecordedTestCase(uuid, self.store, len(self.test_cases))
            self.test_cases[uuid] = recorded
        recorded.version(version, text, answer.source, asked if isinstance(asked, int) else None)

    def _absent(self, uuid: str, answer: Answer) -> None:
        asked = _asked_version(answer)
        if isinstance(asked, int) and uuid in self.test_cases:
            self.test_cases[uuid].absent.add(asked)


def _first_values(pairs: list[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in pairs:
        found.setdefault(name, value)
    return found


def _asked_version(answer: Answer) -> int | str | None:
    raw = _first_values(answer.query()).get("evaluation_test_case_version")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return "malformed"


def _json_object(body: bytes | None) -> dict[str, Any] | str:
    """The body as a JSON object, or why it is not read (a string)."""
    if body is None:
        return "the answer's body was not recorded"
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return "the answer's body is not JSON"
    if not isinstance(value, dict):
        return "expected a JSON object, got another JSON value"
    if _depth(value) > MAX_DEPTH:
        return f"the answer nests deeper than {MAX_DEPTH} levels"
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        if isinstance(item, dict | list):
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children]
    return deepest


def _page_problem(body: dict[str, Any]) -> str | None:
    """Why a 2xx list answer is no page to read, or None."""
    data = body.get("data")
    if not isinstance(data, list):
        return "expected a page: an object with data, a list"
    if not all(isinstance(case, dict) and isinstance(case.get("id"), str) for case in data):
        return "expected every case of the page to be an object with an id, a string"
    return None
