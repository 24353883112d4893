"""Anonymized data files: every person replaced alike everywhere, seeded, and nothing else changed,
so the file still keeps every rule of the page."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from data_builders import AGENT, PROJECT, TEST_CASE, case, data, version, write
from evalmock.cli import main
from evalmock.world import CaseQuery, World
from evalmock.world import anonymize as anonymizing
from evalmock.world.anonymize import anonymize
from evalmock.world.data_files import load_data

OTHER_PROJECT = "7a3d2c1b-0e9f-4a8b-8c7d-6e5f4a3b2c1d"
OTHER_TEST_CASE = "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"
# Two people as a staging service shows them: a test-set user id, a DigitalOcean id and an e-mail.
ADA = {"id": "usr_ada_lovelace", "number": "4417700921", "email": "Ada.Lovelace@staging-acme.io"}
GRACE = {"id": "usr_grace_hopper", "number": "8800123456", "email": "grace.hopper@staging-acme.io"}
SERVICE = {"kind": "service", "id": "svc-token-ingest"}
EMAIL = re.compile(r"[a-z]+\.[a-z]+[0-9]{2}@example\.(com|net|org)")
DECIMAL = re.compile(r"[0-9]{1,20}")
EVERYTHING = {"include_retired": True}


def user(person: dict[str, str]) -> dict[str, str]:
    return {"kind": "user", "id": person["id"]}


def by(
    person: dict[str, str],
    number: int,
    editor: dict[str, str] | None = None,
    uuid: str = TEST_CASE,
) -> dict[str, Any]:
    """Version `number` of `uuid`, created by `person` and last updated by `editor` (the creator
    if none)."""
    editor = editor or person
    return version(
        number,
        uuid,
        created_by_user_id=person["number"],
        created_by_user_email=person["email"],
        updated_by_user_id=editor["number"],
        updated_by_user_email=editor["email"],
    )


def recorded() -> dict[str, Any]:
    """Two lists and two test cases where Ada appears in both lists, in `retired.by`, in a
    `send_email` call and in both APIs; Grace retires a case Ada added; a service adds one."""
    mail_ada = {
        "decisions": {
            "verdict": "wrong",
            "shouldCall": [{"tool": "send_email", "args": {"to": ADA["email"].lower()}}],
        },
        "answer": {"verdict": "wrong", "why": f"Ask {GRACE['email']} before refunding."},
    }
    first = [
        case("case-refund-crash", "2026-10-01T12:00:00Z", addedBy=user(ADA), expect=mail_ada),
        case("corr-7f00", "2026-10-02T12:00:00Z", retired_at="2026-10-03T08:00:00Z"),
        case("corr-7f01", "2026-10-04T12:00:00Z", retired_at="2026-10-05T08:00:00Z"),
        case("corr-7f02", "2026-10-06T12:00:00Z", addedBy=SERVICE),
    ]
    first[1]["addedBy"] = first[1]["retired"]["by"] = user(ADA)
    first[2]["addedBy"], first[2]["retired"]["by"] = user(ADA), user(GRACE)
    second = [
        case("case-ada-again", "2026-10-07T12:00:00Z", project=OTHER_PROJECT, addedBy=user(ADA))
    ]
    document = data(
        [(AGENT, PROJECT, first), (AGENT, OTHER_PROJECT, second)],
        {
            TEST_CASE: [by(ADA, 1), by(ADA, 2, GRACE)],
            OTHER_TEST_CASE: [by(GRACE, 1, ADA, OTHER_TEST_CASE)],
        },
    )
    document["testSet"][0]["note"] = f"recorded by {ADA['email']}"
    return document


def actors(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, id) of every actor of every case, in file order."""
    found = []
    for entry in document["testSet"]:
        for each in entry["cases"]:
            found.append((f"{each['id']}/addedBy", each["addedBy"]["id"]))
            if "retired" in each:
                found.append((f"{each['id']}/retired.by", each["retired"]["by"]["id"]))
    return found


def pairs(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, e-mail) of every creator and editor of every version, in file order."""
    return [
        (body[f"{role}_by_user_id"], body[f"{role}_by_user_email"])
        for entry in document["gradient"]
        for body in entry["versions"]
        for role in ("created", "updated")
    ]


def bytes_of(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode()


# -- the same person, the same replacement
# --------------------------------------------------------------------------------------------------
def test_a_person_gets_one_replacement_in_every_case_and_list() -> None:
    before, after = actors(recorded()), actors(anonymize(recorded(), seed=7))
    replaced = {(old, new) for (_, old), (_, new) in zip(before, after, strict=True)}
    assert [where for where, _ in before] == [where for where, _ in after]
    # one replacement per person, two people stay two, and the service stays itself
    assert len(replaced) == 3
    assert dict(replaced)[SERVICE["id"]] == SERVICE["id"]
    assert dict(replaced)[ADA["id"]] != dict(replaced)[GRACE["id"]]
    assert {ADA["id"], GRACE["id"]}.isdisjoint(dict(replaced).values())


def test_the_retiring_caller_stays_who_it_was() -> None:
    after = {each["id"]: each for each in anonymize(recorded(), seed=7)["testSet"][0]["cases"]}
    retired_by_adder, retired_by_other = after["corr-7f00"], after["corr-7f01"]
    assert retired_by_adder["retired"]["by"] == retired_by_adder["addedBy"]
    assert retired_by_other["addedBy"] == after["case-refund-crash"]["addedBy"]
    assert retired_by_other["retired"]["by"] != retired_by_other["addedBy"]


def test_an_id_and_its_e_mail_stay_paired_across_versions_and_test_cases() -> None:
    before, after = pairs(recorded()), pairs(anonymize(recorded(), seed=7))
    mapping = dict(zip(before, after, strict=True))
    assert len(set(before)) == len(set(after)) == 2  # Ada and Grace, each one pair
    assert mapping[(ADA["number"], ADA["email"])] != mapping[(GRACE["number"], GRACE["email"])]
    for (old_id, old_email), (new_id, new_email) in mapping.items():
        assert (new_id, new_email.casefold()) != (old_id, old_email.casefold())


def test_an_e_mail_in_free_text_is_its_person_s_replacement() -> None:
    after = anonymize(recorded(), seed=7)
    hand = after["testSet"][0]["cases"][0]
    ada_email, grace_email = pairs(after)[0][1], pairs(after)[3][1]
    assert hand["expect"]["decisions"]["shouldCall"][0]["args"] == {"to": ada_email}
    assert hand["expect"]["answer"]["why"] == f"Ask {grace_email} before refunding."
    assert after["testSet"][0]["note"] == f"recorded by {ada_email}"


def test_a_user_id_that_is_an_e_mail_is_that_person_in_both_apis() -> None:
    document = recorded()
    document["testSet"][1]["cases"][0]["addedBy"]["id"] = GRACE["email"].upper()
    after = anonymize(document, seed=7)
    grace_email = pairs(after)[3][1]
    assert after["testSet"][1]["cases"][0]["addedBy"]["id"] == grace_email


def test_a_new_person_leaves_every_other_replacement_as_it_was() -> None:
    document = recorded()
    before = anonymize(document, seed=7)
    newcomer = {"kind": "user", "id": "usr_katherine_johnson"}
    document["testSet"][1]["cases"].append(
        case("case-newcomer", "2026-10-08T12:00:00Z", project=OTHER_PROJECT, addedBy=newcomer)
    )
    after = anonymize(document, seed=7)
    assert actors(after)[:-1] == actors(before)
    assert actors(after)[-1][1] not in {new for _, new in actors(before)}
    assert pairs(after) == pairs(before)


# -- what stays
# --------------------------------------------------------------------------------------------------
def without_people(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with every personal value blanked, as the tests find them (not the code)."""
    blank = copy.deepcopy(document)
    for entry in blank["testSet"]:
        entry.pop("note", None)
        for each in entry["cases"]:
            for actor in (each["addedBy"], each.get("retired", {}).get("by")):
                if actor and actor["kind"] == "user":
                    actor["id"] = "someone"
            if "decisions" in each["expect"]:
                each["expect"]["decisions"]["shouldCall"][0]["args"]["to"] = "someone"
                each["expect"]["answer"]["why"] = "someone"
    for entry in blank["gradient"]:
        for body in entry["versions"]:
            for role in ("created", "updated"):
                body[f"{role}_by_user_id"] = body[f"{role}_by_user_email"] = "someone"
    return blank


def test_nothing_but_people_changes() -> None:
    after = anonymize(recorded(), seed=7)
    assert without_people(after) == without_people(recorded())
    assert after["testSet"][0]["cases"][0]["id"] == "case-refund-crash"  # a hand case's, kept


def test_replacements_keep_their_schema_shapes() -> None:
    after = anonymize(recorded(), seed=7)
    for number, email in pairs(after):
        assert DECIMAL.fullmatch(number), number
        assert EMAIL.fullmatch(email), email
    assert all(new and new != "someone" for _, new in actors(after))


def test_data_without_people_is_unchanged() -> None:
    document = data(
        [(AGENT, PROJECT, [case("case-a", "2026-10-01T12:00:00Z", addedBy=SERVICE)])],
        {TEST_CASE: [{"version": 1, "name": "Checkout answers", "created_by_user_email": ""}]},
    )
    document["seed"] = 3
    assert anonymize(document, seed=7) == document


def test_the_input_is_left_as_it_was_and_shares_nothing_with_the_output() -> None:
    document = {**recorded(), "filters": {"kinds": ["hand"]}}
    after = anonymize(document, seed=7)
    assert document == {**recorded(), "filters": {"kinds": ["hand"]}}
    after["filters"]["kinds"].append("correction")
    after["testSet"][0]["cases"][1]["retired"]["reason"] = "edited"
    after["testSet"][0]["cases"][3]["addedBy"]["id"] = "edited"
    after["gradient"][0]["versions"][0]["name"] = "edited"
    assert document == {**recorded(), "filters": {"kinds": ["hand"]}}


def test_an_e_mail_nested_deeper_than_python_s_stack_is_replaced() -> None:
    """A recording is hostile: args may nest as deep as its JSON does."""
    document = recorded()
    args = document["testSet"][0]["cases"][0]["expect"]["decisions"]["shouldCall"][0]["args"]
    inner = args
    for _ in range(5_000):
        inner["next"] = inner = {}
    inner["to"] = ADA["email"]
    after = anonymize(document, seed=7)
    inner = after["testSet"][0]["cases"][0]["expect"]["decisions"]["shouldCall"][0]["args"]
    for _ in range(5_000):
        inner = inner["next"]
    assert inner == {"to": pairs(after)[0][1]}


# -- seeded
# --------------------------------------------------------------------------------------------------
def test_the_same_seed_gives_the_same_bytes() -> None:
    once, again = anonymize(recorded(), seed=7), anonymize(recorded(), seed=7)
    assert once == again
    assert bytes_of(once) == bytes_of(again)
    assert yaml.safe_dump(once, sort_keys=False) == yaml.safe_dump(again, sort_keys=False)


def test_a_hostile_text_costs_time_in_proportion_to_its_length() -> None:
    """Text that makes a backtracking e-mail pattern take its length squared (tens of seconds)."""
    document = recorded()
    hostile = "a" * 16_000 + "@" + "a." * 16_000 + "1"
    document["testSet"][0]["cases"][0]["expect"]["answer"]["why"] = hostile
    started = time.perf_counter()
    after = anonymize(document, seed=7)
    assert time.perf_counter() - started < 3
    assert after["testSet"][0]["cases"][0]["expect"]["answer"]["why"] == hostile


def test_a_replacement_is_never_another_person_s_original() -> None:
    taken = actors(anonymize(recorded(), seed=7))[0][1]  # Ada's, who added the first case
    document = recorded()
    document["testSet"][1]["cases"][0]["addedBy"]["id"] = taken  # someone already called so
    after = anonymize(document, seed=7)
    assert taken not in {new for _, new in actors(after)}
    assert len({new for _, new in actors(after)}) == 4  # Ada, Grace, the service, the other


def test_two_people_whose_draws_collide_get_two_replacements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: set[str] = set()

    def colliding(fake: Any, original: str) -> str:
        """Everyone's first draw is the same; a redraw is their own."""
        first = original not in drawn
        drawn.add(original)
        return "user-same" if first else f"user-redrawn-{len(drawn)}"

    monkeypatch.setattr(anonymizing, "_id", colliding)
    document = data(
        [
            (
                AGENT,
                PROJECT,
                [
                    case("case-a", "2026-10-01T12:00:00Z", addedBy=user(ADA)),
                    case("case-b", "2026-10-02T12:00:00Z", addedBy=user(GRACE)),
                ],
            )
        ]
    )
    replaced = {new for _, new in actors(anonymize(document, seed=7))}
    assert len(replaced) == 2 and "user-same" in replaced


def test_another_seed_gives_other_people() -> None:
    once, other = anonymize(recorded(), seed=7), anonymize(recorded(), seed=8)
    assert {new for _, new in actors(once)} & {new for _, new in actors(other)} == {SERVICE["id"]}
    assert set(pairs(once)).isdisjoint(pairs(other))


def test_the_replacements_do_not_depend_on_the_process() -> None:
    """Another interpreter, with another string hash seed, draws the same people."""
    script = (
        "import json, sys; sys.path.insert(0, 'tests'); "
        "from world.test_anonymize import recorded; "
        "from evalmock.world.anonymize import anonymize; "
        "sys.stdout.write(json.dumps(anonymize(recorded(), seed=7), ensure_ascii=False))"
    )
    root = Path(__file__).resolve().parents[2]
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        for hash_seed in ("1", "2")
    }
    assert outputs == {bytes_of(anonymize(recorded(), seed=7))}


# -- the rules still hold
# --------------------------------------------------------------------------------------------------
def originals(document: dict[str, Any]) -> set[str]:
    """Every personal value of `document`, lower-cased, as the tests find them."""
    found = {old for _, old in actors(document) if old != SERVICE["id"]}
    return {value.lower() for pair in pairs(document) for value in pair} | found


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_the_anonymized_file_is_served_by_the_data_file_rules(tmp_path: Path, suffix: str) -> None:
    after = anonymize(recorded(), seed=7)
    path = write(tmp_path / f"anonymized{suffix}", after)
    served = World(cases=1, generated=False).with_data(
        load_data([path], World(cases=1, generated=False))
    )
    for entry in after["testSet"]:
        expected = sorted(entry["cases"], key=lambda each: each["addedAt"], reverse=True)
        query = CaseQuery(AGENT, entry["projectId"], **EVERYTHING)
        assert list(served.iter_cases(query)) == expected
    assert served.evaluation_test_case(TEST_CASE, 2) == after["gradient"][0]["versions"][1]
    text = path.read_text(encoding="utf-8").lower()
    assert [value for value in originals(recorded()) if value in text] == []


def test_an_anonymized_export_of_the_world_keeps_every_rule_and_no_person(tmp_path: Path) -> None:
    """The world's own people: user ids in actors, e-mails in `send_email` calls and in versions."""
    exported = tmp_path / "world.json"
    args = ["fixtures", "export", "--seed", "3", "--cases", "40", "--include-retired"]
    assert main([*args, "-o", str(exported)]) == 0
    document = json.loads(exported.read_text(encoding="utf-8"))
    world = World(seed=3, cases=1)
    # numeric ids are looked for in their fields only: as text they could be part of any number
    people = {
        value.lower()
        for person in world.vocabulary.people
        for value in (person.actor_id, person.email)
    }
    numbers = {person.numeric_id for person in world.vocabulary.people}
    assert people & originals(document) and numbers & originals(document)
    after = anonymize(document, seed=11)
    path = write(tmp_path / "anonymized.json", after)
    load_data([path], World(seed=3, cases=1, generated=False))
    text = path.read_text(encoding="utf-8").lower()
    assert sorted(value for value in people if value in text) == []
    assert numbers.isdisjoint(number for number, _ in pairs(after))
    before_ids = [[each["id"] for each in entry["cases"]] for entry in document["testSet"]]
    assert [[each["id"] for each in entry["cases"]] for entry in after["testSet"]] == before_ids


# Where and how a recording may hold an e-mail, each with the text that must not survive.
HIDDEN_FORMS = {
    "a service actor's id": ("addedBy", {"kind": "service", "id": "ops.bot@staging-acme.io"}),
    "runId": ("runId", "run-for-ada.lovelace@staging-acme.io"),
    "madeOn": ("madeOn", "shop.checkout@2026.11.1 by ada.lovelace@staging-acme.io"),
    "mailto with %40": ("runId", "mailto:ada.lovelace%40staging-acme.io"),
    "an IDN domain": ("runId", "ada.lovelace@bücher-acme.de"),
    "a punycode domain": ("runId", "ada.lovelace@xn--bcher-kva.xn--p1ai"),
    "a quoted local part": ("runId", 'write to "ada lovelace"@staging-acme.io'),
    "an IP-literal domain": ("runId", "ada.lovelace@[192.0.2.17]"),
    "an IPv6 literal": ("runId", "ada.lovelace@[IPv6:2001:db8::17]"),
    "a full-width at": ("runId", "ada.lovelace＠staging-acme.io"),
    "an HTML entity at": ("runId", "ada.lovelace&#64;staging-acme.io"),
    "a hex HTML entity at": ("runId", "ada.lovelace&#x40;staging-acme.io"),
    "deep in a tool's args": (
        "expect",
        {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [
                    {"tool": "send", "args": {"a": [{"b": [{"c": {"to": "ada@acme.io"}}]}]}}
                ],
            }
        },
    ),
    "a key of a tool's args": (
        "expect",
        {
            "decisions": {
                "verdict": "wrong",
                "shouldCall": [{"tool": "send", "args": {"ada@acme.io": True}}],
            }
        },
    ),
}


@pytest.mark.parametrize("form", HIDDEN_FORMS)
def test_an_e_mail_is_found_wherever_and_however_a_case_holds_it(form: str) -> None:
    field, value = HIDDEN_FORMS[form]
    document = data(
        [(AGENT, PROJECT, [case("case-one", "2026-10-05T12:00:00Z", **{field: value})])]
    )
    after = anonymize(document, seed=7)
    text = json.dumps(after, ensure_ascii=False).lower()
    for original in ("ada.lovelace", "ops.bot", "ada@acme", "ada lovelace"):
        assert original not in text, (form, text)
    assert EMAIL.search(text), text
    assert anonymize(document, seed=7) == after  # the same seed, the same replacement


def test_an_e_mail_in_any_form_is_the_same_person_as_plain() -> None:
    plain = data(
        [(AGENT, PROJECT, [case("case-one", "2026-10-05T12:00:00Z", runId="ada@acme.io")])]
    )
    encoded = data(
        [(AGENT, PROJECT, [case("case-one", "2026-10-05T12:00:00Z", runId="ada%40acme.io")])]
    )
    assert anonymize(plain, seed=7) == anonymize(encoded, seed=7)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_cases_with_e_mails_in_every_form_keep_every_rule(tmp_path: Path, suffix: str) -> None:
    cases = [
        case(f"case-{number}", f"2026-10-{1 + number:02d}T12:00:00Z", **{field: value})
        for number, (field, value) in enumerate(HIDDEN_FORMS.values())
    ]
    after = anonymize(data([(AGENT, PROJECT, cases)]), seed=7)
    load_data([write(tmp_path / f"anonymized{suffix}", after)], World(generated=False))
