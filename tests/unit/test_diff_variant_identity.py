"""A union variant is the same variant whatever its spelling: its identity is its tag, or for an
untagged branch the members a reader requires of it (its wire shape), never its title or the
name of the type it refers to.

Built from the pinned schema: ``McpServer``'s untagged ``stdio`` branch spelled three ways (a
titled ``allOf`` reference as pinned, the same object written inline under its title, a bare
``$ref``), compared in both directions; and the real revision pair where upstream made that move
(v0.6.3 -> v0.7.0), where the only change of the branch is an added optional ``_meta``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acpgen.diff.compare import Finding, compare
from acpgen.diff.snapshot import snapshot
from acpgen.diff.sources import load_files, locate

PINNED = Path(__file__).resolve().parents[2] / "schema" / "v1" / "schema.json"
Doc = dict[str, Any]


def _pinned() -> Doc:
    doc: Doc = json.loads(PINNED.read_text(encoding="utf-8"))
    return doc


def _stdio_index(doc: Doc) -> int:
    branches = doc["$defs"]["McpServer"]["anyOf"]
    (index,) = [i for i, b in enumerate(branches) if "McpServerStdio" in json.dumps(b)]
    return index


def as_pinned(doc: Doc) -> Doc:
    """``{"title": "stdio", "allOf": [{"$ref": "#/$defs/McpServerStdio"}]}``, as upstream writes it."""
    return doc


def inline(doc: Doc) -> Doc:
    """The same branch written out inline under its title (as upstream wrote it up to v0.6.3)."""
    index = _stdio_index(doc)
    branch = doc["$defs"]["McpServer"]["anyOf"][index]
    target = copy.deepcopy(doc["$defs"]["McpServerStdio"])
    target.pop("description", None)
    doc["$defs"]["McpServer"]["anyOf"][index] = {
        "title": branch["title"],
        "description": branch["description"],
        **target,
    }
    return doc


def bare_reference(doc: Doc) -> Doc:
    """The branch as a plain ``$ref``, untitled (keyed by the type it refers to)."""
    index = _stdio_index(doc)
    doc["$defs"]["McpServer"]["anyOf"][index] = {"$ref": "#/$defs/McpServerStdio"}
    return doc


SPELLINGS: dict[str, Callable[[Doc], Doc]] = {"pinned": as_pinned, "inline": inline, "ref": bare_reference}
PAIRS = [(a, b) for a in SPELLINGS for b in SPELLINGS if a != b]


def _findings(old: Doc, new: Doc) -> list[Finding]:
    return compare(snapshot("old", old, old), snapshot("new", new, new))


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_a_variant_spelled_another_way_is_no_change(old: str, new: str) -> None:
    """No wire finding, no variant removed or added, no field change (the branch's lenient-reading
    keywords read the same inline and through the reference). What remains is true of the
    generated code and said once: an inline branch gets a class of its own (``StdioMcpServer``),
    a referenced one is the referenced type's class."""
    before, after = SPELLINGS[old](_pinned()), SPELLINGS[new](_pinned())
    assert before != after  # the spelling really differs
    found = _findings(before, after)
    assert [f for f in found if f.category == "wire"] == []
    inline_side = "inline" in (old, new)
    expected = {("class-added" if new == "inline" else "class-removed", "StdioMcpServer")} if inline_side else set()
    assert {(f.rule, f.message.rsplit(" ", 1)[-1]) for f in found} == expected


def test_a_changed_required_member_is_still_a_wire_change() -> None:
    """Identity by wire shape is not blindness: requiring another member of the untagged branch
    is a change a reader sees."""
    before = inline(_pinned())
    after = bare_reference(_pinned())
    after["$defs"]["McpServerStdio"]["required"].append("cwd")
    after["$defs"]["McpServerStdio"]["properties"]["cwd"] = {"type": "string"}
    found = _findings(before, after)
    assert any(f.level == "breaking" and f.category == "wire" for f in found), found


def test_v0_7_0_moves_the_stdio_server_behind_a_reference_without_a_wire_break(acp_schemas: Path) -> None:
    old = load_files("v0.6.3", locate(acp_schemas / "v0.6.3"))
    new = load_files("v0.7.0", locate(acp_schemas / "v0.7.0"))
    mcp = [
        (f.rule, f.item, f.level)
        for f in compare(old, new)
        if f.item.startswith(("variant:McpServer", "field:McpServer["))
    ]
    assert ("variant-removed", "variant:McpServer[stdio]", "breaking") not in mcp
    assert not [m for m in mcp if m[0] == "variant-added"], mcp
    assert ("field-added", "field:McpServer[McpServerStdio]._meta", "info") in mcp, mcp
