"""Anonymizing a data file (`--anonymize`): people's ids and e-mails replaced with seeded Faker
values, each person alike everywhere.

What is personal, by the documents' schemas:

- a TestSetCase's `addedBy` and `retired.by` (an Actor, "the authenticated caller, never a typed
  name"): its `id`, unless the actor says `kind: service` (a service is not a person);
- an apiEvaluationTestCase's `created_by_user_id`, `created_by_user_email`, `updated_by_user_id`
  and `updated_by_user_email`;
- every e-mail address in every other string of a case, a version or a note, at any depth and keys
  too (`shouldCall` args, `shouldSay`, `runId`, `madeOn`, a service actor's id, a retirement's
  reason, a test case's description): the schemas give free text no owner, and a `send_email`
  call's `to` names a person as surely as `created_by_user_email` does. An e-mail is found as text
  writes one: `%40`, a full-width `＠` or `&#64;` for its @, a quoted local part, an IDN domain, an
  IP literal in brackets (docs/recording.md lists what is not found).

No schema holds a person's name. Everything else is kept as written: the ids of cases (a hand
case's `case-` included; items and URLs refer to them), agents, projects and test cases, times,
kinds, versions, and the order of every list.

Each person's replacement is drawn from a Faker seeded with (seed, the original value), so the same
person gets the same replacement in every case, list and API, an id and its e-mail stay paired, and
adding a case changes no other person's replacement (unless two draws collide, which a redraw
settles in a fixed order). An e-mail is the same person in any letter case; a user id that is an
e-mail is the same person as that e-mail. Replacements keep their schema's shape: a decimal id
(`uint64`, `^[0-9]{1,20}$`) stays decimal, a UUID stays a UUID, an e-mail is an e-mail at a domain
reserved for examples (RFC 2606), and no replacement is any original's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from evalmock.world.hashing import stable_hash

if TYPE_CHECKING:
    from faker import Faker

# A person as the replacement table keys them: ("email", casefolded) or ("id", as written).
Identity = tuple[str, str]
# Gives the replacement of one personal value: (the field's kind, "id" or "email", the value).
Person = Callable[[str, str], str]

# What may be an e-mail: a whole run of a local part's characters (or a quoted local part), an @ as
# text may write one (`%40` in a URL, a full-width `＠`, `&#64;` in HTML), and a domain's characters
# (any letters: an IDN) or an IP literal in brackets. Possessive and anchored to a run's start, so a
# hostile text costs time in proportion to its length (a backtracking pattern of labels costs its
# square); `_domain_length` says how much of a domain's characters is a domain.
_CANDIDATE = re.compile(
    r'(?<![\w.+-])(?P<local>[\w.+-]++|"[^"\\\r\n]{1,64}")'
    r"(?P<at>@|%40|＠|&#0*64;|&#[xX]0*40;)"
    r"(?P<domain>\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\]|[\w.-]++)"
)
_TOP_LEVEL = re.compile(r"[^\W\d_]{2,63}|xn--[A-Za-z0-9-]{1,59}")
_DECIMAL = re.compile(r"[0-9]{1,20}")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}")
# The apiEvaluationTestCase fields that name a person, each with what it holds.
_VERSION_PEOPLE = {
    "created_by_user_id": "id",
    "created_by_user_email": "email",
    "updated_by_user_id": "id",
    "updated_by_user_email": "email",
}
# A case's ids, which items and URLs refer to: kept as written. Every other string of a case, at any
# depth, has its e-mails replaced (`madeOn`'s `agent@2026.11.1` reads as none: its domain has no
# top-level label of letters).
_CASE_KEPT = frozenset({"id", "projectId"})
# The ids of a list entry and a test case entry: kept (the rest, a note, is free text).
_ENTRY_KEPT = frozenset({"agentId", "projectId", "test_case_uuid"})
_ATTEMPTS = 1_000  # redraws after a collision; the draws' spaces hold tens of millions of values
_DECIMAL_WIDTH = (8, 19)  # digits of a replacement id: enough to spread, and within 64 bits


def anonymize(data: Mapping[str, Any], *, seed: int) -> dict[str, Any]:
    """A copy of the data file's mapping `data` in which every person is replaced (see the module's
    docstring); `data` is left as it was."""
    return replaced(data, replacements(people(data), seed))


def people(data: Mapping[str, Any]) -> set[Identity]:
    """Every person a data file's mapping (or a part of one, in the same shape) names."""
    found: set[Identity] = set()

    def collect(kind: str, value: str) -> str:
        found.add(_identity(kind, value))
        return value

    _rewritten(data, collect)
    return found


def replaced(data: Mapping[str, Any], table: Mapping[Identity, str]) -> dict[str, Any]:
    """A copy of `data` with each person replaced by the table's (`replacements`) stand-in; every
    person in `data` must be in the table."""
    return _rewritten(data, lambda kind, value: table[_identity(kind, value)])


def _identity(kind: str, value: str) -> Identity:
    """Who a value names: an e-mail (in any letter case) wherever it is written, else the id."""
    if kind == "email" or _is_email(value):
        return ("email", value.casefold())
    return ("id", value)


def _is_email(text: str) -> bool:
    found = _CANDIDATE.fullmatch(text)
    return found is not None and _domain_length(found["domain"]) == len(found["domain"])


def _emails_replaced(text: str, person: Person) -> str:
    """`text` with each e-mail address in it (in any of the forms `_CANDIDATE` reads) given to
    `person` as `local@domain` and replaced by what it returns."""

    def one(found: re.Match[str]) -> str:
        local, domain = found["local"], found["domain"]
        length = _domain_length(domain)
        return (
            person("email", f"{local}@{domain[:length]}") + domain[length:] if length else found[0]
        )

    return _CANDIDATE.sub(one, text)


def _domain_length(text: str) -> int:
    """How much of `text` (what follows an @) is an e-mail's domain: whole labels (letters, digits,
    inner hyphens) up to the last one of 2 to 63 letters (or an IDN's `xn--`) after the first; an IP
    literal in brackets whole; 0 when none is."""
    if text.startswith("["):
        return len(text)
    length, end = 0, 0
    for index, label in enumerate(text.split(".")):
        if not label or "-" in (label[0], label[-1]):  # the candidate holds no other character
            break
        end += len(label) + (1 if index else 0)
        if index and _TOP_LEVEL.fullmatch(label):
            length = end
    return length


# -- the walk: where people are
# --------------------------------------------------------------------------------------------------
def _rewritten(data: Mapping[str, Any], person: Person) -> dict[str, Any]:
    """`data` copied, every personal value given to `person` and replaced by what it returns."""
    rewritten: dict[str, Any] = {}
    for key, value in data.items():
        if key == "testSet" and isinstance(value, list):
            rewritten[key] = [_entry(entry, "cases", _case, person) for entry in value]
        elif key == "gradient" and isinstance(value, list):
            rewritten[key] = [_entry(entry, "versions", _version, person) for entry in value]
        else:
            rewritten[key] = _scrubbed(value, person)
    return rewritten


def _entry(entry: Any, inner: str, rewrite: Callable[[Any, Person], Any], person: Person) -> Any:
    """A list entry (`cases`) or test case entry (`versions`), its items each rewritten."""
    if not isinstance(entry, Mapping):
        return _scrubbed(entry, person)
    rewritten: dict[str, Any] = {}
    for key, value in entry.items():
        if key == inner and isinstance(value, list):
            rewritten[key] = [rewrite(item, person) for item in value]
        elif key in _ENTRY_KEPT:
            rewritten[key] = _copied(value)
        else:
            rewritten[key] = _scrubbed(value, person)
    return rewritten


def _case(case: Any, person: Person) -> Any:
    if not isinstance(case, Mapping):
        return _scrubbed(case, person)
    rewritten: dict[str, Any] = {}
    for key, value in case.items():
        if key in _CASE_KEPT:
            rewritten[key] = _copied(value)
        elif key == "addedBy":
            rewritten[key] = _actor(value, person)
        elif key == "retired" and isinstance(value, Mapping):
            rewritten[key] = {
                inner: _actor(item, person) if inner == "by" else _scrubbed(item, person)
                for inner, item in value.items()
            }
        else:
            rewritten[key] = _scrubbed(value, person)
    return rewritten


def _actor(actor: Any, person: Person) -> Any:
    """An Actor: a user's id replaced. One that does not say it is a service is taken as a
    person; a service's id keeps its name, but an e-mail in it is replaced as in any text."""
    if not isinstance(actor, Mapping):
        return _scrubbed(actor, person)
    is_person = actor.get("kind") != "service"
    return {
        key: _personal(value, "id", person)
        if key == "id" and is_person
        else _scrubbed(value, person)
        for key, value in actor.items()
    }


def _version(version: Any, person: Person) -> Any:
    if not isinstance(version, Mapping):
        return _scrubbed(version, person)
    rewritten: dict[str, Any] = {}
    for key, value in version.items():
        if key in _VERSION_PEOPLE:
            rewritten[key] = _personal(value, _VERSION_PEOPLE[key], person)
        elif key in _ENTRY_KEPT:
            rewritten[key] = _copied(value)
        else:
            rewritten[key] = _scrubbed(value, person)
    return rewritten


def _personal(value: Any, kind: str, person: Person) -> Any:
    """A personal field's value replaced; an empty one names nobody. A number (which the document
    does not allow) is replaced too, and stays a number when its replacement is decimal."""
    if isinstance(value, str):
        return person(kind, value) if value else value
    if isinstance(value, int) and not isinstance(value, bool):
        replaced = person(kind, str(value))
        return int(replaced) if _DECIMAL.fullmatch(replaced) else replaced
    return _scrubbed(value, person)


def _scrubbed(value: Any, person: Person) -> Any:
    """`value` copied, with every e-mail address in its text (keys too) replaced."""
    return _mapped(value, lambda text: _emails_replaced(text, person))


def _copied(value: Any) -> Any:
    return _mapped(value, lambda text: text)


def _mapped(value: Any, text: Callable[[str], str]) -> Any:
    """`value` copied (mappings as dicts, lists as lists), each string through `text`; without
    recursion, since a recording may nest deeper than Python's stack."""
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (what, into which container, where)
    while pending:
        source, into, slot = pending.pop()
        if isinstance(source, Mapping):
            copied: dict[Any, Any] = {}
            into[slot] = copied
            for key, item in source.items():
                new_key = text(key) if isinstance(key, str) else key
                copied[new_key] = None  # placed now, so the copy keeps the key order
                pending.append((item, copied, new_key))
        elif isinstance(source, list):
            into[slot] = [None] * len(source)
            pending += [(item, into[slot], index) for index, item in enumerate(source)]
        else:
            into[slot] = text(source) if isinstance(source, str) else source
    return root[0]


# -- the replacements: who becomes whom
# --------------------------------------------------------------------------------------------------
def replacements(found: set[Identity], seed: int) -> dict[Identity, str]:
    """Each person's replacement, drawn from (seed, the original); one that is taken already (by an
    original or an earlier replacement) is drawn again, in sorted order, so the table never
    depends on where people appear."""
    if not found:
        return {}
    # here, not above: a server never anonymizes, and Faker is slow to import
    from faker import Faker

    fake = Faker("en_US")
    taken = set(found)
    table: dict[Identity, str] = {}
    for kind, original in sorted(found):
        for attempt in range(_ATTEMPTS):
            fake.seed_instance(stable_hash("anonymize", seed, kind, original, attempt))
            candidate = _email(fake) if kind == "email" else _id(fake, original)
            if _identity(kind, candidate) not in taken:
                break
        else:
            raise RuntimeError(f"no free replacement for a person after {_ATTEMPTS} draws")
        taken.add(_identity(kind, candidate))
        table[(kind, original)] = candidate
    return table


def _email(fake: Faker) -> str:
    """`first.last12@example.org`: a Faker name at a domain reserved for examples."""
    first, last = (_letters(name) for name in (fake.first_name(), fake.last_name()))
    return f"{first or 'user'}.{last or 'person'}{fake.numerify('##')}@{fake.safe_domain_name()}"


def _letters(name: str) -> str:
    return re.sub("[^a-z]", "", name.lower())


def _id(fake: Faker, original: str) -> str:
    """An id of the original's shape: decimal (as `uint64` requires), a UUID, or `user-` and 12 hex
    digits."""
    if _DECIMAL.fullmatch(original):
        width = min(max(len(original), _DECIMAL_WIDTH[0]), _DECIMAL_WIDTH[1])
        return str(fake.random_int(10 ** (width - 1), 10**width - 1))
    if _UUID.fullmatch(original):
        uuid = str(fake.uuid4())
        return uuid.upper() if original == original.upper() else uuid
    return f"user-{fake.hexify('^' * 12)}"
