"""The capability tree as the schema writes it: every property below ``agentCapabilities`` (of
``InitializeResponse``) and ``clientCapabilities`` (of ``InitializeRequest``), ``_meta`` aside.

The feature manifest is checked against these properties (:mod:`acpgen.features.check`) and the
IR names them (:func:`acpgen.ir.capabilities.capability_tree`: attributes and ``supports_...``
accessors, from :mod:`acpgen.ir.naming`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from acpgen.load.inventory import Node, description, ref_name

Owner = Literal["agent", "client"]
Presence = Literal["true", "present"]

_ROOTS: tuple[tuple[str, Owner, str, str], ...] = (
    ("agentCapabilities", "agent", "InitializeResponse", "AgentCapabilities"),
    ("clientCapabilities", "client", "InitializeRequest", "ClientCapabilities"),
)


@dataclass(frozen=True, slots=True)
class CapabilityProperty:
    """One property of the capability tree."""

    path: str
    """Wire path from the root: ``agentCapabilities.sessionCapabilities.resume``."""
    owner: Owner
    """The side that advertises it."""
    root: str
    """The ``$defs`` type at the root of its tree (``AgentCapabilities``)."""
    presence: Presence
    """``true``: a boolean that must be true; ``present``: an object that must be present and not null."""
    wires: tuple[str, ...]
    """The wire names of the properties from the root type down to it (``sessionCapabilities``, ``resume``)."""
    leaf: bool
    """No capabilities below it."""
    stable: bool
    description: str


def capability_properties(defs: Mapping[str, Node], unstable: frozenset[str]) -> tuple[CapabilityProperty, ...]:
    """Every property of both capability trees, parents before their children."""
    found: list[CapabilityProperty] = []
    for root, owner, holder, fallback in _ROOTS:
        prop = defs.get(holder, {}).get("properties", {}).get(root, {})
        root_type = (ref_name(prop) if isinstance(prop, Mapping) else None) or fallback
        if root_type in defs:
            _Walk(defs, unstable, owner, root_type, found).descend(root_type, root, (), stable=True)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class _Walk:
    defs: Mapping[str, Node]
    unstable: frozenset[str]
    owner: Owner
    root_type: str
    found: list[CapabilityProperty]

    def descend(
        self, type_name: str, path: str, wires: tuple[str, ...], *, stable: bool, visiting: frozenset[str] = frozenset()
    ) -> None:
        visiting |= {type_name}  # a capability type inside itself is not descended into again
        for wire, prop in (self.defs[type_name].get("properties") or {}).items():
            if wire == "_meta" or not isinstance(prop, Mapping):
                continue
            target = ref_name(prop) or _nullable_ref(prop)
            children = _capability_props(self.defs, target)
            here = f"{path}.{wire}"
            here_stable = stable and f"field:{type_name}.{wire}" not in self.unstable
            self.found.append(
                CapabilityProperty(
                    path=here,
                    owner=self.owner,
                    root=self.root_type,
                    presence="true" if prop.get("type") == "boolean" else "present",
                    wires=(*wires, wire),
                    leaf=not children,
                    stable=here_stable,
                    description=description(prop),
                )
            )
            if target is not None and children and target not in visiting:
                self.descend(target, here, (*wires, wire), stable=here_stable, visiting=visiting)


def _nullable_ref(prop: Node) -> str | None:
    for branch in prop.get("anyOf") or prop.get("oneOf") or []:
        if isinstance(branch, Mapping) and (name := ref_name(branch)) is not None:
            return name
    return None


def _capability_props(defs: Mapping[str, Node], type_name: str | None) -> list[str]:
    if type_name is None or type_name not in defs:
        return []
    return [p for p in (defs[type_name].get("properties") or {}) if p != "_meta"]
