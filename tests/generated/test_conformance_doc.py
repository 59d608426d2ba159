"""``docs/conformance.md`` lists exactly the requirements the packages check (issue 31, item 9): it
is rendered from the IR of each build and compared with the file (``make goldens`` rewrites it)."""

from __future__ import annotations

import pytest

from acpgen.pipeline import pinned_revision
from acpgen.render.conformance_doc import conformance_doc
from acpgen.source.config import load_settings
from acpgen.source.protocols import for_protocol
from tests.conftest import ROOT

DOC = ROOT / "docs" / "conformance.md"


def test_the_conformance_page_is_rendered_from_the_requirement_tables(update_goldens: bool) -> None:
    settings = load_settings(ROOT / "pyproject.toml")
    v1, v2 = pinned_revision(settings), pinned_revision(for_protocol(settings, 2))
    text = conformance_doc(
        v1.protocol("stable"), v1.protocol("unstable"), v2.protocol("stable"), v2.protocol("unstable")
    )
    if update_goldens:
        DOC.write_text(text, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == text, (
        "docs/conformance.md is stale: run make goldens"
    )
    assert "| ACP-AGENT-CANCEL-001 | MANDATORY | agent |" in text
    assert "| ACP-CAP-SESSION-LOAD-GATE | MANDATORY | client |" in text
