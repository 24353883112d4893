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
