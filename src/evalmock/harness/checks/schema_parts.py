"""The part of the document's schema a body broke, and the page's words for that part alone.

`response_schema_conformance` stands for every field list of a page, so its source quotes a few of
them. A finding quotes the words of the part its response broke instead: a missing `data` is the
page's list of the 200 answer's members, not its allowed values or its bound on `args`.

The part is read from Schemathesis's failure: the JSON Schema keyword that failed (the last word of
its schema path), the member it failed at (the last name of the instance path, array indexes
skipped, and the one above it) and the answer's status.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalmock.contract.sources import Quote, Source, on_digitalocean_page, on_test_set_page, page

# The page lists the members of each answer, each with its type and, where needed, "required".
_MEMBERS = {
    "test-set": (
        "The page lists the members of a 200 answer (its page of cases), each with its type, "
        "and marks those required; openapi/agent-test-set.yaml states the list as CasePage."
    ),
    "gradient": (
        "The page lists the members of the answer (its Go struct), each with its type; "
        "openapi/gradient-evaluation-test-cases.yaml states the list."
    ),
}
_ERROR_MEMBERS = (
    "The page lists the members of each error answer's envelope, and marks error, code, message "
    "and requestId required; openapi/agent-test-set.yaml states it as ErrorEnvelope."
)
_STRUCTURE = frozenset({"required", "type", "additionalProperties", "anyOf", "oneOf", "$ref"})


def _test_set(keyword: str, member: str, parent: str, status: int | None) -> Source | None:
    if keyword in _STRUCTURE:
        if status is not None and status >= 400:
            return page(
                on_test_set_page(
                    "Stable machine-readable discriminant. Values match domain error codes (see "
                    "docs/API-ROUTE-CONVENTIONS.md §4.3).",
                    every=True,
                ),
                reading=_ERROR_MEMBERS,
            )
        return page(on_test_set_page("Page of cases."), reading=_MEMBERS["test-set"])
    quote: Quote | None = None
    if keyword == "enum":
        allowed = (
            "right wrong"
            if member == "verdict"
            else "user service"
            if member == "kind" and parent in ("addedBy", "by")
            else "correction hand"
        )
        quote = on_test_set_page(f"Allowed values: {allowed}")
    elif keyword in ("minLength", "maxLength"):
        quote = on_test_set_page(
            ">= 1 characters <= 200 characters" if member == "tool" else ">= 1 characters"
        )
    elif keyword == "maxProperties":
        quote = on_test_set_page("<= 100 properties")
    elif keyword == "pattern" and member == "pointer":
        quote = on_test_set_page(
            "Where the item is in the run’s output, as a JSON Pointer (RFC 6901), e.g. /matches/2."
        )
    elif keyword == "format":
        quote = on_test_set_page(
            "string format: uuid" if member == "projectId" else "string format: date-time"
        )
    return None if quote is None else page(quote)


def _gradient(keyword: str, member: str, parent: str, status: int | None) -> Source | None:
    if keyword in _STRUCTURE and (status is None or status < 400):
        return page(
            on_digitalocean_page("type AgentEvaluationTestCaseGetResponse struct{…}"),
            reading=_MEMBERS["gradient"],
        )
    if keyword in ("minimum", "maximum") and member == "success_threshold_pct":
        return page(
            on_digitalocean_page(
                "The success threshold for the star metric. This is a percentage value between "
                "0 and 100."
            )
        )
    if keyword in ("format", "pattern") and status is not None and status < 400:
        return page(on_digitalocean_page("formatuint64"))
    return None


def schema_part_source(
    api: str, schema_path: Sequence[object], instance_path: Sequence[object], status: int | None
) -> Source | None:
    """The page's words for the part of the schema a body broke; None where no part of the page
    states it alone (the check's whole source then stands)."""
    keyword = next((str(part) for part in reversed(schema_path) if isinstance(part, str)), "")
    names = [str(part) for part in instance_path if not isinstance(part, int)]
    member, parent = (names[-1] if names else ""), (names[-2] if len(names) > 1 else "")
    judge = _test_set if api == "test-set" else _gradient
    return judge(keyword, member, parent, status)
