"""Word pools drawn once from a seeded Faker; the request path only indexes into them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalmock.world.hashing import stable_hash

if TYPE_CHECKING:
    from faker import Faker

_SHOULD_SAY = (
    "Cite the {noun} clause before drafting.",
    "Ask for the {noun} number before answering.",
    "Say that {company} is not a customer yet.",
    "Point the user to the {noun} policy instead of guessing.",
    "Quote the amount from the invoice, not from memory.",
    "Decline politely: {noun} data is out of scope for this agent.",
    "Summarise the {noun} terms in at most three sentences.",
    "Answer in the customer's language and name {company} once.",
    "Confirm the {noun} date with the user before acting.",
    "Explain that a human from {company} will follow up.",
)
_WHY = (
    "The run invented a {noun} clause the contract does not contain.",
    "It answered from stale {noun} data.",
    "It skipped the {noun} check the policy requires.",
    "The answer contradicts {company}'s signed terms.",
    "It promised a refund without looking up the {noun}.",
    "It mixed up {company} with another customer.",
    "It leaked an internal {noun} note to the customer.",
    "The tone was curt for a first reply about {noun}.",
)
_RETIREMENT = (
    "Superseded by a newer case.",
    "Duplicate of an older case.",
    "The expected answer changed with the {month} policy update.",
    "The {noun} feature was removed from the product.",
    "Expert review: the expected verdict was wrong.",
    "Flaky: the run depended on live {noun} data.",
    "Merged into a broader case about {noun}.",
    "{company} left; the case no longer applies.",
    "The tool it expects was renamed.",
    "Out of scope after the {month} re-scoping.",
)
_MONTHS = ("January", "March", "April", "June", "September", "October")
_TOOL_VERBS = (
    "search",
    "fetch",
    "lookup",
    "list",
    "create",
    "update",
    "summarize",
    "classify",
    "notify",
)
_SERVICE_KINDS = ("token-ingest", "session-replay", "ci-runner", "nightly-sync", "review-bot")
_NOUNS = (
    "governing-law",
    "indemnity",
    "warranty",
    "renewal",
    "termination",
    "liability",
    "pricing",
    "invoice",
    "refund",
    "subscription",
    "onboarding",
    "privacy",
    "discount",
    "delivery",
    "tax",
    "escrow",
    "trial",
    "shipping",
    "payment",
    "late-fee",
    "confidentiality",
    "data-retention",
    "cancellation",
    "upgrade",
    "chargeback",
    "credit-note",
    "service-level",
    "support-plan",
    "export",
    "licence",
)
_COUNTRIES = (
    "DE",
    "FR",
    "US",
    "GB",
    "JP",
    "NL",
    "ES",
    "IT",
    "SE",
    "CH",
    "IE",
    "CA",
    "AU",
    "BR",
    "IN",
    "SG",
)
_LANGUAGES = ("en", "de", "fr", "ja", "ar", "es", "pt", "he", "nl", "zh")
_CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF", "SEK", "CAD", "AUD")


@dataclass(frozen=True)
class Person:
    """A user as both APIs see one: a test-set actor id, and a DigitalOcean numeric id, name and
    email."""

    actor_id: str
    numeric_id: str
    name: str
    email: str


@dataclass(frozen=True)
class Vocabulary:
    people: tuple[Person, ...]
    services: tuple[str, ...]
    nouns: tuple[str, ...]
    companies: tuple[str, ...]
    countries: tuple[str, ...]
    languages: tuple[str, ...]
    currencies: tuple[str, ...]
    should_say: tuple[str, ...]
    why: tuple[str, ...]
    retirement_reasons: tuple[str, ...]
    extra_tools: tuple[str, ...]
    phrases: tuple[str, ...]


def build_vocabulary(seed: int) -> Vocabulary:
    """Draw every pool with a Faker seeded from `seed` (no relative-to-now providers: they use the
    clock)."""
    # here, not above: a server whose pools are kept (world/start_cache.py) never imports it
    from faker import (
        Faker,
    )

    fake = Faker("en_US")
    fake.seed_instance(stable_hash("vocabulary", seed))
    nouns = tuple(fake.random_elements(_NOUNS, length=20, unique=True))
    companies = _distinct(fake.company, 30)

    def fill(template: str) -> str:
        return template.format(
            noun=fake.random_element(nouns),
            company=fake.random_element(companies),
            month=fake.random_element(_MONTHS),
        )

    people = tuple(
        Person(
            actor_id=f"user-{number:04d}",
            numeric_id=str(fake.random_int(10_000, 99_999_999)),
            name=name,
            email=_email_of(name, fake.free_email_domain()),
        )
        for number, name in zip(
            _distinct_ints(fake, 1, 9999, 24), _distinct(fake.name, 24), strict=True
        )
    )
    return Vocabulary(
        people=people,
        services=tuple(f"svc-{kind}-{fake.hexify('^^^^')}" for kind in _SERVICE_KINDS),
        nouns=nouns,
        companies=companies,
        countries=tuple(fake.random_elements(_COUNTRIES, length=10, unique=True)),
        languages=tuple(fake.random_elements(_LANGUAGES, length=6, unique=True)),
        currencies=tuple(fake.random_elements(_CURRENCIES, length=5, unique=True)),
        should_say=tuple(fill(fake.random_element(_SHOULD_SAY)) for _ in range(40)),
        why=tuple(fill(fake.random_element(_WHY)) for _ in range(40)),
        retirement_reasons=tuple(fill(template) for template in _RETIREMENT),
        extra_tools=tuple(
            f"{fake.random_element(_TOOL_VERBS)}_{noun.replace('-', '_')}" for noun in nouns[:6]
        ),
        phrases=tuple(
            f"{fake.random_element(nouns)} {fake.random_element(nouns)} "
            f"{fake.random_element(companies)}"
            for _ in range(30)
        ),
    )


def _distinct(draw, count: int) -> tuple[str, ...]:
    """`count` distinct values from `draw`, in first-seen order (bounded: Faker pools are large)."""
    seen: dict[str, None] = {}
    for _ in range(count * 50):
        seen.setdefault(draw(), None)
        if len(seen) == count:
            break
    return tuple(seen)


def _distinct_ints(fake: Faker, low: int, high: int, count: int) -> tuple[int, ...]:
    seen: dict[int, None] = {}
    while len(seen) < count:
        seen.setdefault(fake.random_int(low, high), None)
    return tuple(seen)


def _email_of(name: str, domain: str) -> str:
    local = ".".join(part for part in name.lower().replace("'", "").split() if part.isalpha())
    return f"{local or 'user'}@{domain}"
