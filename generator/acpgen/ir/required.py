"""Which methods every handler of a role must implement, and why the others may be left out.

A method is required (abstract in ``Agent`` or ``Client``) when any peer may call it whatever
the handler did. A handler may leave a method out, its default answering "method not found"
(requests) or ignoring the message (notifications), when:

- a capability gates it: the peer calls it only after the handler advertised that capability
  (the curated rule table, ``schema/capability-rules.json``);
- it is unstable;
- the peer can only call it with an identifier that the handler hands out, but not in every
  answer to a method it must implement: an agent that lists no authentication methods in its
  ``initialize`` answer is never asked to ``authenticate``, one that offers no session modes or
  config options in its ``session/new`` answer never gets ``session/set_mode`` or
  ``session/set_config_option``.

An identifier is a named string type (``AuthMethodId``, ``SessionModeId``) in the required
params of a method; the handler hands it out when its answer to a method it handles holds that
type and the question did not (``session/new`` answers with a ``SessionId`` it was not given).
It hands it out always when the answer holds it in a required, non-null property that is not a
list, directly or through such properties, as ``session/new`` holds ``sessionId``; the methods
that need only such identifiers (``session/prompt``, ``session/cancel``) are required. Everything
here is read from the IR, so a schema revision that adds such a method needs no change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from acpgen import ir

ROLE_SIDES: tuple[ir.Side, ...] = ("agent", "client")
"""The sides whose handlers this rule is for (proxies and older ``both`` methods keep the
capability and stability rule only)."""


@dataclass(frozen=True, slots=True)
class Optionality:
    """Why a handler may leave a method out (the text goes into its docstring)."""

    reason: str
    identifier: str | None = None
    """The identifier type the peer needs first, when that is why (``AuthMethodId``)."""


def optional_methods(protocol: ir.Protocol) -> dict[tuple[str, ir.Side], Optionality]:
    """``(wire, side)`` -> why a handler may leave the method out, for every method that is not
    required."""
    types = {t.wire: t for t in protocol.types}
    givers = _handed_out(protocol, types)
    found: dict[tuple[str, ir.Side], Optionality] = {}
    for m in protocol.methods:
        if m.gate is not None:
            found[(m.wire, m.side)] = Optionality(f"the {_peer(m)} calls it only once {_own(m)} advertised `{m.gate}`")
        elif not m.stable:
            found[(m.wire, m.side)] = Optionality("it is unstable")
    required = [m for m in protocol.methods if (m.wire, m.side) not in found]
    while True:  # the greatest set of methods whose identifiers the required ones always hand out
        missing = {
            (m.wire, m.side): reason
            for m in required
            if m.side in ROLE_SIDES and (reason := _unmet(m, types, givers, required)) is not None
        }
        if not missing:
            return found
        found.update(missing)
        required = [m for m in required if (m.wire, m.side) not in missing]


def _unmet(
    method: ir.Method,
    types: Mapping[str, ir.TypeDef],
    givers: Mapping[str, tuple[ir.Method, ...]],
    required: list[ir.Method],
) -> Optionality | None:
    """Why ``method`` is optional: an identifier of its params that its handler hands out, but
    not in every answer to a required method; ``None`` when there is none."""
    always = [m for m in required if m.side == method.side and m.result is not None]
    for identifier in _identifiers(types[method.params], types):
        given = [m for m in givers.get(identifier, ()) if m.side == method.side]
        if given and not any(_always_holds(types, m.result, identifier) for m in always if m.result):
            where = ", ".join(f"`{m.wire}`" for m in given)
            return Optionality(
                f"the {_peer(method)} calls it only with a `{identifier}` value that {_own(method)} handed out "
                f"in an answer to {where}, which not every {method.side} does",
                identifier,
            )
    return None


def _identifiers(params: ir.TypeDef, types: Mapping[str, ir.TypeDef]) -> list[str]:
    """The named string types of the required properties of ``params``, in field order."""
    return [f.ref for f in params.fields if f.required and f.ref is not None and _is_identifier(types.get(f.ref))]


def _is_identifier(t: ir.TypeDef | None) -> bool:
    return t is not None and t.kind == "alias" and t.shape.get("type") == "string"


def _handed_out(protocol: ir.Protocol, types: Mapping[str, ir.TypeDef]) -> dict[str, tuple[ir.Method, ...]]:
    """Identifier -> the methods whose answer holds it although their question did not."""
    found: dict[str, list[ir.Method]] = {}
    for m in sorted(protocol.methods, key=lambda m: (m.wire, m.side)):
        if m.result is None or m.side not in ROLE_SIDES:
            continue
        asked = _reachable(types, [m.params])
        for name in sorted(_reachable(types, [m.result]) - asked):
            if _is_identifier(types.get(name)):
                found.setdefault(name, []).append(m)
    return {name: tuple(methods) for name, methods in found.items()}


def _reachable(types: Mapping[str, ir.TypeDef], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name not in seen and name in types:
            seen.add(name)
            pending.extend(types[name].references)
    return seen


def _always_holds(types: Mapping[str, ir.TypeDef], root: str, identifier: str) -> bool:
    """Whether every ``root`` value holds ``identifier`` through required, non-null, single
    properties."""
    seen: set[str] = set()
    pending = [root]
    while pending:
        name = pending.pop()
        if name == identifier:
            return True
        if name in seen or name not in types:
            continue
        seen.add(name)
        pending.extend(
            f.ref for f in types[name].fields if f.required and not (f.nullable or f.is_array or f.is_map) and f.ref
        )
    return False


def _peer(method: ir.Method) -> str:
    return "client" if method.side == "agent" else "agent" if method.side == "client" else "peer"


def _own(method: ir.Method) -> str:
    return f"the {method.side}" if method.side in ROLE_SIDES else "the handler"
