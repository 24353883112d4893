"""The docs stay as docs/README.md promises: the user guides short, and every relative link of the
docs and the README leading to a file that exists, at a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
KB = 1024
# The guides a newcomer reads first; their details live in the reference pages they link.
BOUNDS = {"harness.md": 25 * KB, "proxy.md": 15 * KB, "server.md": 15 * KB}
LINK = re.compile(r"\]\(([^()\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            name = anchor(heading.group(1))
            number = 0
            while (name if number == 0 else f"{name}-{number}") in found:
                number += 1
            found.add(name if number == 0 else f"{name}-{number}")
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file, _, fragment = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no such heading in {linked.name}")
    return broken


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_each_user_guide_stays_within_its_size(name: str) -> None:
    size = (DOCS / name).stat().st_size
    assert size <= BOUNDS[name], (
        f"expected docs/{name} at most {BOUNDS[name] // KB} KB, received {size / KB:.1f} KB: "
        "move details to its reference page"
    )


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_the_index_names_every_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(DOCS).as_posix()
        if name != "README.md":
            assert f"]({name})" in index, f"expected docs/README.md to list {name}, received none"


def test_a_link_to_a_missing_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page: `--flag`\n\n[b](b.md#nothing) [a](#a-page---flag)\n")
    (tmp_path / "b.md").write_text("# B\n")
    assert anchors(tmp_path / "a.md") == {"a-page---flag"}
    assert broken_links(tmp_path / "a.md") == ["b.md#nothing: no such heading in b.md"]


def test_the_targets_files_the_guide_shows_load(tmp_path: Path) -> None:
    from evalmock.contract.targets import load_targets

    text = (DOCS / "targets.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert len(blocks) >= 2, "expected the reference's file and the complete example"
    for number, block in enumerate(blocks):
        (tmp_path / f"shown-{number}.toml").write_text(block, encoding="utf-8")
        assert load_targets(tmp_path / f"shown-{number}.toml").projects


# Facts stated once. A new filter of the list or a new documented status is a change to the contract
# reference and to the page a user reads about it: no other page lists them, it links there.
FACT_HOMES = ("docs/contract.md", "docs/server.md")
# Pages that name the members for another reason than to state them.
NOT_STATEMENTS = {
    # generated from the rules' own texts (`dev.py rules-doc`): it changes with the code
    "docs/rules.md",
    # a run's record: the answers it measured, by status, not the documented ones
    "docs/maintainers/benchmarks.md",
}
DOCUMENTS = {"test-set": "agent-test-set.yaml", "gradient": "gradient-evaluation-test-cases.yaml"}
# A block that names this many of a list's members lists them (a stale list missing a new member
# still names the others).
LISTS_FROM = 3
URL = re.compile(r"\S*\?\S*=\S*")  # a request's target: an example, not a list
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(*\[])")


def operation(api: str) -> dict:
    import yaml

    document = yaml.safe_load((ROOT / "openapi" / DOCUMENTS[api]).read_text(encoding="utf-8"))
    [path_item] = document["paths"].values()
    return path_item["get"]


def documented_error_statuses(api: str) -> frozenset[str]:
    """The error statuses the API's document gives its GET (its `default` aside)."""
    codes = (str(code) for code in operation(api)["responses"])
    return frozenset(code for code in codes if code.isdigit() and int(code) >= 400)


def filters() -> frozenset[str]:
    """The list's filters: the query parameters a sealed cursor binds (their `x-evalmock-query`)."""
    return frozenset(
        parameter["name"]
        for parameter in operation("test-set")["parameters"]
        if (parameter.get("x-evalmock-query") or {}).get("cursor-binds")
    )


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """A page's statements, each with the leads of its table or list: each table row and list
    item, each sentence of prose; code blocks and request targets left out (an example of a
    request is not a list)."""
    found: list[tuple[str, list[str]]] = []
    for paragraph in re.split(r"\n\s*\n", FENCE.sub("", text)):
        items = [
            URL.sub("", item.replace("\n", " "))
            for item in re.split(r"\n(?=\s*(?:\||[-*] |\d+\. ))", paragraph)
        ]
        leads = [lead(item) for item in items if re.match(r"\s*(?:\||[-*] |\d+\. )", item)]
        for item in items:
            found += [
                (sentence, leads)
                for sentence in (
                    [item] if item.lstrip().startswith("|") else SENTENCE_END.split(item)
                )
            ]
    return found


def lead(item: str) -> str:
    """What a table row or a list item is keyed by: its first cell, or its words before a colon."""
    item = item.strip()
    if item.startswith("|"):
        return item.split("|")[1]
    words = re.sub(r"^(?:[-*]|\d+\.) ", "", item)
    return words.split(":")[0] if ":" in words[:40] else ""


def names(words: frozenset[str], block: str) -> frozenset[str]:
    return frozenset(
        w for w in words if re.search(rf"(?<![\w.,-]){re.escape(w)}(?![\w-]|[.,]\d)", block)
    )


def keyed_by(members: frozenset[str], leads: list[str]) -> frozenset[str]:
    """The members a table or list is keyed by: rows or items whose lead is members alone (a
    table of one status a row lists the statuses as surely as a sentence does)."""
    pure = [
        cell
        for cell in leads
        if cell.strip()
        and all(w in members for w in re.split(r"[\s,;/`*]+|\band\b|\bor\b", cell) if w)
    ]
    return names(members, " ; ".join(pure))


def lists_of(members: frozenset[str], text: str) -> list[str]:
    """The statements of a page that list `members`: naming at least LISTS_FROM of them, or
    standing in a table or list keyed by that many."""
    enough = min(LISTS_FROM, len(members))
    return [
        block.strip()
        for block, leads in blocks(text)
        if len(names(members, block)) >= enough or len(keyed_by(members, leads)) >= enough
    ]


def facts() -> dict[str, frozenset[str]]:
    return {
        "the filters": filters(),
        **{f"the {api} API's statuses": documented_error_statuses(api) for api in DOCUMENTS},
    }


def pages_listing(members: frozenset[str]) -> dict[str, list[str]]:
    found = {}
    for page in pages():
        name = page.relative_to(ROOT).as_posix()
        if name not in NOT_STATEMENTS and (listed := lists_of(members, page.read_text("utf-8"))):
            found[name] = listed
    return found


@pytest.mark.parametrize("fact", sorted(facts()))
def test_a_list_of_the_filters_or_statuses_is_stated_only_in_its_two_homes(fact: str) -> None:
    members = facts()[fact]
    assert members, f"expected {fact} in the OpenAPI documents, received none"
    elsewhere = {
        page: listed[0][:200]
        for page, listed in pages_listing(members).items()
        if page not in FACT_HOMES
    }
    listed = ", ".join(sorted(members))
    assert elsewhere == {}, (
        f"expected {fact} ({listed}) listed only in {' and '.join(FACT_HOMES)}; received lists "
        f"in {sorted(elsewhere)}: link there instead. First of each: {elsewhere}"
    )


def test_a_pasted_list_is_found_and_a_request_example_is_not() -> None:
    statuses = documented_error_statuses("test-set")
    assert lists_of(statuses, "Errors: 400 `bad-input`, 401, 404 and 503.\n")
    assert lists_of(filters(), "| `projectId`, `include`, `kind` | the filters |\n")
    assert lists_of(filters(), "- The filters are projectId,\n  include and kind.\n")
    example = "Send `?projectId=2489E9AD-2EE2-8E00-8EC9-32D5F69181C0&include=retired&kind=hand`.\n"
    assert lists_of(filters(), example + "```\nprojectId include kind\n```\n") == []
    table = "| status | code |\n|---|---|\n| 400 | `bad-input` |\n| 401 | x |\n| 503 | y |\n"
    assert lists_of(statuses, table)  # one status a row, the table lists them
    assert lists_of(statuses, "A 400-digit limit, 401 of 404 pages, 4000 chars.\n") == []


def change_table() -> dict[str, str]:
    """The maintainers' "Where to change what": each change, the cell naming where."""
    text = (DOCS / "maintainers" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return {row[0].removeprefix("| "): row[1] for row in rows[1:]}


def test_where_to_change_what_names_modules_that_exist_the_401_s_code_first() -> None:
    table = change_table()
    assert len(table) >= 12
    [code] = [where for change, where in table.items() if "401" in change]
    assert "`server/auth.py`" in code and "`server/errors.py`" in code
    package = ROOT / "src" / "evalmock"
    homes = (ROOT, package, package / "harness", package / "harness" / "report")
    for change, where in table.items():
        for path in re.findall(r"`([\w/]+\.(?:py|yaml))`", where):
            assert any((home / path).is_file() for home in homes), f"{change}: no {path}"


# How long a wait is, said anywhere but its one home: a start "in about a second", a first run
# "takes a few minutes" or "a minute or two".
RESTATED_WAIT = re.compile(
    r"(ready|starts?|takes?|installs? it)[^.|\n]{0,20}\b(in )?(about a second"
    r"|a few (seconds|minutes)|a minute or two|\d+ (to|–) \d+ (s|minutes)\b)"
)


def test_the_figures_of_waiting_are_stated_once_in_the_readme_and_pointed_to_elsewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("### What you wait for", 1)[1].split("\n#", 1)[0]
    assert "| a start of `dev.py serve`" in table and "| the first `dev.py`" in table
    elsewhere = {
        path.name: path.read_text(encoding="utf-8")
        for path in [*pages(), ROOT / "dev.py"]
        if path.name != "rules.md"
    }
    elsewhere["README.md"] = readme.replace(table, "")
    restated = {
        name: m.group(0) for name, text in elsewhere.items() if (m := RESTATED_WAIT.search(text))
    }
    assert not restated, f"expected the waits only in README's table; restated: {restated}"
    assert (
        "What you wait for" in elsewhere["dev.py"] and "what-you-wait-for" in elsewhere["server.md"]
    )


def docs_named_in(text: str) -> set[str]:
    # ours are lower case; a page's quote naming its own docs (API-ROUTE-...) is not ours
    return set(re.findall(r"\bdocs/[a-z0-9/-]+\.md\b", text))


def test_every_docs_page_the_code_and_the_documents_name_exists() -> None:
    named = {
        (page, path.relative_to(ROOT))
        for path in [*ROOT.joinpath("src").rglob("*.py"), *ROOT.joinpath("openapi").glob("*.yaml")]
        for page in docs_named_in(path.read_text(encoding="utf-8"))
    }
    assert named, "the code names docs pages"
    missing = [(page, str(where)) for page, where in sorted(named) if not (ROOT / page).is_file()]
    assert missing == []
    assert docs_named_in("see docs/data.md and docs/world.md.") == {"docs/data.md", "docs/world.md"}
