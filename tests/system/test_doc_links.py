"""Every relative link of the README and the docs leads somewhere: the file exists and, where the
link names a heading (``page.md#heading``), the page has that heading, as GitHub makes its anchors
(lower case, punctuation dropped, spaces to hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "tests").glob("*/README.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def test_the_anchor_rule_is_githubs() -> None:
    assert anchor("Order: what the agent sent before an answer comes before it") == (
        "order-what-the-agent-sent-before-an-answer-comes-before-it"
    )
    assert anchor("Install: the `remote` extra") == "install-the-remote-extra"
    assert anchor("acpgen's own data, wherever it is installed") == "acpgens-own-data-wherever-it-is-installed"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for link in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:
        path, _, heading = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif heading and target.suffix == ".md" and heading not in anchors(target):
            broken.append(f"{link}: no heading #{heading} in {target.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"
