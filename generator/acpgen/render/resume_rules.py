"""Template data for the resume module (``resume.py``): which updates a resumable agent may join
when a session's event log passes its bound, derived from the IR's session fold.

A chunk kind of the session fold (``agent_message_chunk``: its piece joins a list) whose piece is a
tagged union with a text branch (a branch tagged ``text`` whose one required string member besides
the tag holds the text) can be joined: adjacent chunks of one shape become one chunk with the texts
joined. Nothing here names an update kind; a schema without such chunks gets no joining (the log
then only forgets, and says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.ir.session_fold import UNION, UPDATE_METHOD

TEXT = "text"
"""The tag value of a text content branch."""


@dataclass(frozen=True, slots=True)
class ResumeRules:
    """What ``resume.py`` is rendered from (``None`` members: nothing to join)."""

    method: str | None = None
    member: str | None = None
    tag: str | None = None
    kinds: tuple[tuple[str, str], ...] = ()
    text: tuple[str, str, str] | None = None


def resume_rules(protocol: ir.Protocol) -> ResumeRules:
    """The resume rules of ``protocol`` (the template renders them where the package can be
    served remotely: where it has the RFD's routing)."""
    fold = protocol.session
    if not fold.available or fold.tag is None:
        return ResumeRules()
    by_wire = {t.wire: t for t in protocol.types}
    kinds: list[tuple[str, str]] = []
    text: tuple[str, str, str] | None = None
    for kind in fold.kinds:
        if kind.how != "append" or kind.piece is None:
            continue
        found = _text_branch(by_wire, kind.kind, kind.piece)
        if found is not None and text in (None, found):
            kinds.append((kind.kind, kind.piece))
            text = found
    if not kinds or text is None:
        return ResumeRules()
    return ResumeRules(UPDATE_METHOD, fold.update[1], fold.tag, tuple(sorted(kinds)), text)


def _text_branch(by_wire: dict[str, ir.TypeDef], kind: str, piece: str) -> tuple[str, str, str] | None:
    """``(tag member, "text", text member)`` of the union the chunk kind's piece holds."""
    union = by_wire.get(UNION)
    variant = next((v for v in union.variants if v.key == kind), None) if union else None
    payload = by_wire.get(variant.payload) if variant and variant.payload else None
    member = next((f for f in payload.fields if f.wire == piece), None) if payload else None
    pieces = by_wire.get(member.ref) if member and member.ref else None
    if pieces is None or pieces.kind != "union" or pieces.discriminator is None:
        return None
    branch = next((v for v in pieces.variants if v.tag == TEXT or v.key == TEXT), None)
    body = by_wire.get(branch.payload) if branch and branch.payload else None
    if body is None:
        return None
    strings = [
        f for f in body.fields if f.required and f.wire != pieces.discriminator and f.shape.get("type") == "string"
    ]
    return (pieces.discriminator, TEXT, strings[0].wire) if len(strings) == 1 else None
