"""Which side writes each type: what decides whom a change of that type breaks.

The caller writes a request's params (the client, for a method the agent handles), the handler
writes its result, the sender writes a notification; a type written by a side is written by it
wherever it is referenced from. Methods of other sides (``both``, ``proxy``, ``protocol``) may
be called by either, so both write their types.
"""

from __future__ import annotations

from collections.abc import Mapping

from acpgen import ir

BOTH: frozenset[ir.Owner] = frozenset({"agent", "client"})
CALLERS: Mapping[str, frozenset[ir.Owner]] = {
    "agent": frozenset({"client"}),
    "client": frozenset({"agent"}),
}


def writers(methods: tuple[ir.Method, ...], types: tuple[ir.TypeDef, ...]) -> dict[str, frozenset[ir.Owner]]:
    """Type name -> the sides that write it (types no method reaches are left out: both may)."""
    references = {t.wire: t.references for t in types}
    found: dict[str, set[ir.Owner]] = {}
    for method in methods:
        caller = CALLERS.get(method.side, BOTH)
        handler = BOTH - caller if caller != BOTH else BOTH
        _spread(method.params, caller, references, found)
        if method.result is not None:
            _spread(method.result, handler, references, found)
    return {name: frozenset(sides) for name, sides in sorted(found.items())}


def _spread(
    root: str,
    sides: frozenset[ir.Owner],
    references: Mapping[str, frozenset[str]],
    found: dict[str, set[ir.Owner]],
) -> None:
    """Mark ``root`` and every type it refers to as written by ``sides``."""
    stack = [root]
    while stack:
        name = stack.pop()
        known = found.setdefault(name, set())
        if sides <= known:
            continue
        known |= sides
        stack.extend(sorted(references.get(name, frozenset())))
