"""What the kit knows of a build, handed in by the package's ``conformance`` module:
its requirements and registered checks, its scenarios and probe steps, its method
table, models and capability rules, and its schema document (for strict judging)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from ...connection.capabilities import Side, Violation
from ...wire.rpc import MethodSpec
from .registry import CheckSpec, Registry, ScenarioSpec
from .requirements import Requirement

Violations = Callable[[Side, Any, str, Any], list[Violation]]


@dataclass(frozen=True, slots=True)
class Wire:
    """The member names of ``initialize`` in the build's schema (v1
    ``clientCapabilities`` and ``agentInfo``; the v2 draft ``capabilities`` and
    ``info``)."""

    client_capabilities: str = "clientCapabilities"
    client_info: str = "clientInfo"
    agent_capabilities: str = "agentCapabilities"
    agent_info: str = "agentInfo"


@dataclass(frozen=True, slots=True)
class ProbeStep:
    """A step of the probe agent's turn (``conformance client``), in order."""

    name: str
    run: Callable[[Any, str], None]


@dataclass(frozen=True)
class Kit:
    """Everything the kit judges with."""

    requirements: tuple[Requirement, ...]
    checks: tuple[CheckSpec, ...]
    methods: tuple[MethodSpec, ...]
    violations: Violations
    """``capabilities.violations``: the rules a message breaks, given what the peer
    advertised."""
    client_capabilities: type[BaseModel]
    agent_capabilities: type[BaseModel]
    protocol_version: int
    schema: str
    """What the package was generated from (schema package, version, file, build)."""
    package: str
    document: Mapping[str, Any] = field(default_factory=dict)
    """The build's schema (JSON Schema 2020-12), for judging what is sent strictly."""
    definitions: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)
    """``"<side> <wire>"`` -> the ``$defs`` names of the method's params and result."""
    scenarios: tuple[ScenarioSpec, ...] = ()
    steps: tuple[ProbeStep, ...] = ()
    wire: Wire = Wire()
    absolute_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Model class -> attributes the schema says hold absolute paths."""
    one_based: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Model class -> attributes the schema says hold 1-based line numbers."""
    catch_alls: frozenset[str] = frozenset()
    """Model classes of the catch-all variants of open unions: their members are the
    unknown variant's own, not custom members of a spec type."""

    @cached_property
    def registry(self) -> Registry:
        return Registry(self.checks, self.requirements)

    @cached_property
    def ids(self) -> frozenset[str]:
        return frozenset(r.id for r in self.requirements)

    def requirement(self, rid: str) -> Requirement | None:
        return self.registry.requirements.get(rid)

    def derived(self, family: str, subject: str, side: str | None = None) -> str | None:
        """The id of the derived requirement of ``family`` about ``subject`` (of the
        side it judges, when given); None when the build has none."""
        for r in self.requirements:
            if (
                r.family == family
                and r.subject == subject
                and (side is None or r.side == side)
            ):
                return r.id
        return None

    def method(self, wire: str, sides: Iterable[str]) -> MethodSpec | None:
        """The method ``wire`` handled by one of ``sides``."""
        wanted = tuple(sides)
        return next(
            (m for m in self.methods if m.wire == wire and m.side in wanted), None
        )

    def has_method(self, wire: str) -> bool:
        return any(m.wire == wire for m in self.methods)
