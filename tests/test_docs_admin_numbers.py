"""docs/admin-api.md's numbers are their homes' numbers: a request's bounds and defaults as the
admin document (openapi/evalmock-admin.yaml) has them, each error's status as the document lists
it and its code as the server raises it, and the bound an error names as `SessionLimits` holds
it. A revision of a home points at the doc line still stating the old number."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from evalmock.contract.documents import ADMIN
from evalmock.server.errors import STATUS_CODES
from evalmock.server.sessions.limits import DEFAULT_LIMITS
from evalmock.server.sessions.middleware import store_unavailable
from test_docs_session_limits import limits_table, stated

ROOT = Path(__file__).resolve().parent.parent
ADMIN_API = ROOT / "docs" / "admin-api.md"
SERVER = ROOT / "src" / "evalmock" / "server"

RANGE = re.compile(r"(\d[\d,]*) to (\d[\d,]*)")
DEFAULT = re.compile(r"\(default (\d[\d,]*)\)")
NAME = re.compile(r"`([\w.]+)`")
INTEGER_CELL = re.compile(r"`(\d+)`")


class Statement(NamedTuple):
    line: int
    field: str
    number: str  # minimum, maximum or default
    value: int
    text: str


def bounded(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The schema of each request field or parameter whose numbers the doc states, by the name the
    doc gives it: a session's settings, a fault's, and the journal's `limit`."""
    schemas = spec["components"]["schemas"]
    journal = spec["paths"]["/sessions/{sessionId}/requests"]["get"]["parameters"]
    (limit,) = [p["schema"] for p in journal if p.get("name") == "limit"]
    return {
        **{name: schemas["SessionSettings"]["properties"][name] for name in ("seed", "cases")},
        "churn": schemas["SessionSettings"]["properties"]["churn"],
        **{
            name: schemas["FaultSettings"]["properties"][name]
            for name in ("times", "retryAfter", "latencyMs")
        },
        "limit": limit,
    }


def _field(line: str, at: int) -> str:
    """The field a number at `at` speaks of: a table row's first cell, else the last name in
    backticks before it."""
    if line.startswith("|"):
        found = NAME.search(line.split("|")[1])
        return found[1] if found else ""
    names = NAME.findall(line[:at])
    return names[-1] if names else ""


def statements(text: str) -> list[Statement]:
    """Every bound (`MIN to MAX`) and default (`(default N)`, or a `default` column's `N`) the text
    states, with the field it states it of."""
    found: list[Statement] = []
    default_column: int | None = None
    for index, line in enumerate(text.splitlines()):
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if not line.startswith("|"):
            default_column = None
        elif "default" in cells and default_column is None:
            default_column = cells.index("default")
            continue
        elif default_column is not None and (
            value := INTEGER_CELL.fullmatch(cells[default_column])
        ):
            found.append(Statement(index + 1, _field(line, 0), "default", int(value[1]), line))
        for match in RANGE.finditer(line):
            field = _field(line, match.start())
            for number, value in zip(("minimum", "maximum"), match.groups(), strict=True):
                found.append(Statement(index + 1, field, number, int(value.replace(",", "")), line))
        for match in DEFAULT.finditer(line):
            value = int(match[1].replace(",", ""))
            found.append(Statement(index + 1, _field(line, match.start()), "default", value, line))
    return found


def stale_bounds(text: str, spec: dict[str, Any]) -> list[str]:
    """Each line stating a bound or default otherwise than the document, or of a field it does not
    bound, with what it states and what the document says."""
    schemas = bounded(spec)
    wrong = []
    for said in statements(text):
        schema = schemas.get(said.field, {})
        if said.number not in schema:
            wrong.append(
                f"admin-api.md:{said.line}: states a {said.number} of `{said.field}`, which "
                f"the admin document's schemas this test reads have not: {said.text}"
            )
        elif schema[said.number] != said.value:
            wrong.append(
                f"admin-api.md:{said.line}: states `{said.field}`'s {said.number} {said.value}; "
                f"the admin document says {schema[said.number]}: {said.text}"
            )
    return wrong


def test_the_doc_states_each_request_bound_as_the_admin_document_has_it() -> None:
    assert stale_bounds(ADMIN_API.read_text(encoding="utf-8"), ADMIN.spec) == []


def test_the_doc_states_every_bound_a_user_sends_against() -> None:
    said = {(one.field, one.number) for one in statements(ADMIN_API.read_text(encoding="utf-8"))}
    assert said == {
        *((field, number) for field in ("seed", "cases") for number in ("minimum", "maximum")),
        ("churn", "default"),
        *(
            (field, number)
            for field in ("retryAfter", "latencyMs", "limit")
            for number in ("minimum", "maximum")
        ),
        *(("times", number) for number in ("minimum", "maximum", "default")),
    }


@pytest.mark.parametrize(
    ("schema", "bound", "value", "line"),
    [
        ("FaultSettings", "times", 500, 98),
        ("FaultSettings", "retryAfter", 60, 96),
        ("SessionSettings", "cases", 5000, 61),
    ],
)
def test_a_revised_bound_points_at_the_doc_line_still_stating_the_old_one(
    schema: str, bound: str, value: int, line: int
) -> None:
    revised = copy.deepcopy(ADMIN.spec)
    revised["components"]["schemas"][schema]["properties"][bound]["maximum"] = value
    found = stale_bounds(ADMIN_API.read_text(encoding="utf-8"), revised)
    assert [where.split(":")[1] for where in found] == [str(line)], found
    assert f"maximum {value}" in found[0] or f"says {value}" in found[0]


def test_a_revised_journal_limit_points_at_its_sentence() -> None:
    revised = copy.deepcopy(ADMIN.spec)
    journal = revised["paths"]["/sessions/{sessionId}/requests"]["get"]["parameters"]
    next(p for p in journal if p.get("name") == "limit")["schema"]["maximum"] = 500
    found = stale_bounds(ADMIN_API.read_text(encoding="utf-8"), revised)
    assert len(found) == 1 and "`limit`'s maximum 1000; the admin document says 500" in found[0]


def test_a_bound_of_a_field_the_document_does_not_bound_is_named() -> None:
    text = "| `pageSize` | up to it, 1 to 50 |\n"
    assert [said.field for said in statements(text)] == ["pageSize", "pageSize"]
    assert len(stale_bounds(text, ADMIN.spec)) == 2


# The errors table: each status the admin document lists, and one it cannot: the router's 405 for a
# method a path does not answer (no operation is there to document it).
UNDOCUMENTED_STATUSES = {405}
# The number an error's "when" states, and the code that holds it.
ERROR_NUMBERS = {
    "fault-queue-full": DEFAULT_LIMITS.max_faults,
    "too-large": DEFAULT_LIMITS.max_body_bytes,
    "too-many-sessions": DEFAULT_LIMITS.max_sessions,
    "store-unavailable": int(store_unavailable().headers["Retry-After"]),
}
NUMBER = re.compile(r"\d[\d,]*(?: MiB)?")
ERROR_NAMED = re.compile(r"(\d{3}) `([a-z-]+)`")


class ErrorRow(NamedTuple):
    code: str
    status: int
    when: str


def errors_table(text: str) -> list[ErrorRow]:
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:4] for line in section.splitlines() if line.startswith("| `")]
    return [ErrorRow(code.strip(" `"), int(status), when.strip()) for code, status, when in rows]


def documented_statuses(spec: dict[str, Any]) -> set[int]:
    return {
        int(status)
        for path in spec["paths"].values()
        for method, operation in path.items()
        if method != "parameters"
        for status in operation["responses"]
        if int(status) >= 400
    }


def raised() -> set[tuple[int, str]]:
    """Each (status, code) the server answers: an `ApiError(status, "code", ...)` it raises, and
    the code it gives a status when nothing more specific is known."""
    pairs = set(STATUS_CODES.items())
    for path in SERVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "ApiError"
                and len(node.args) >= 2
                and all(isinstance(arg, ast.Constant) for arg in node.args[:2])
            ):
                pairs.add((node.args[0].value, node.args[1].value))
    return pairs


def wrong_errors(text: str, spec: dict[str, Any], pairs: set[tuple[int, str]]) -> list[str]:
    """Each error the doc names (in the errors table, and in the limits table's "over it") with a
    status or code the server does not answer together, a status the document does not list, or a
    number its home does not hold; and each documented status the errors table leaves out."""
    rows = errors_table(text)
    wrong = [
        f"`{row.code}` is not answered with {row.status}"
        for row in rows
        if (row.status, row.code) not in pairs
    ]
    listed = documented_statuses(spec) | UNDOCUMENTED_STATUSES
    wrong += [
        f"{row.status} of `{row.code}` is no status of the admin document"
        for row in rows
        if row.status not in listed
    ]
    wrong += [
        f"{status} is missing from the errors table"
        for status in sorted(listed - {row.status for row in rows})
    ]
    for row in rows:
        said = [stated(number) for number in NUMBER.findall(row.when)]
        if said != ([ERROR_NUMBERS[row.code]] if row.code in ERROR_NUMBERS else []):
            wrong.append(
                f"`{row.code}` states {said}; its home holds {ERROR_NUMBERS.get(row.code)}"
            )
    for name, over in limits_over(text).items():
        for status, code in ERROR_NAMED.findall(over):
            if (int(status), code) not in pairs or code not in {row.code for row in rows}:
                wrong.append(f"the limit {name!r} names {status} `{code}`, which no error is")
    return wrong


def limits_over(text: str) -> dict[str, str]:
    """The third cell ("over it") of each row of the limits table."""
    section = text.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:4] for line in section.splitlines() if line.startswith("| ")]
    return {name.strip(): over.strip() for name, _, over in rows[1:]}


def test_the_errors_table_states_the_statuses_and_codes_the_server_answers() -> None:
    assert wrong_errors(ADMIN_API.read_text(encoding="utf-8"), ADMIN.spec, raised()) == []


def test_the_limits_table_names_its_errors_as_the_errors_table_does() -> None:
    over = limits_over(ADMIN_API.read_text(encoding="utf-8"))
    assert set(over) == set(limits_table(ADMIN_API.read_text(encoding="utf-8")))
    assert {code for cell in over.values() for _, code in ERROR_NAMED.findall(cell)} == {
        "too-many-sessions",
        "too-large",
        "fault-queue-full",
        "bad-input",
    }


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        ("| `too-large` | 413 |", "| `too-large` | 414 |", "`too-large` is not answered with 414"),
        ("| `method-not-allowed` | 405 |", "| `not-allowed` | 405 |", "`not-allowed` is not"),
        ("its 100 faults queued", "its 50 faults queued", "`fault-queue-full` states [50]"),
        ("`Retry-After: 1`", "`Retry-After: 2`", "`store-unavailable` states [2]"),
        ("409 `fault-queue-full`", "409 `queue-full`", "names 409 `queue-full`"),
    ],
)
def test_a_changed_status_code_or_number_is_named(old: str, new: str, named: str) -> None:
    text = ADMIN_API.read_text(encoding="utf-8")
    assert old in text
    found = wrong_errors(text.replace(old, new), ADMIN.spec, raised())
    assert any(named in one for one in found), found


def test_a_status_the_document_gains_is_missing_from_the_errors_table() -> None:
    revised = copy.deepcopy(ADMIN.spec)
    revised["paths"]["/sessions"]["post"]["responses"]["422"] = {"description": "new"}
    found = wrong_errors(ADMIN_API.read_text(encoding="utf-8"), revised, raised())
    assert found == ["422 is missing from the errors table"]
