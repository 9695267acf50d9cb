"""README.md and docs/*.md link to files and sections that exist (the README was split into docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [m["target"] for m in _LINK.finditer(text) if not re.match(r"[a-z]+:", m["target"])]


def test_slug_spells_github_anchors() -> None:
    assert slug("A real run: the PyTorch 2.14.1 CUDA wheel") == "a-real-run-the-pytorch-2141-cuda-wheel"
    assert slug("Objects and archives: `multiple definition` before the link") == (
        "objects-and-archives-multiple-definition-before-the-link"
    )


def test_the_readme_links_every_docs_page() -> None:
    linked = {t.split("#")[0] for t in _links(ROOT / "README.md")}
    assert {f"docs/{p.name}" for p in PAGES[1:]} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        missing_anchor = bool(anchor) and dest.suffix == ".md" and dest.exists() and anchor not in _anchors(dest)
        if not dest.exists() or missing_anchor:
            broken.append(target)
    assert broken == []
