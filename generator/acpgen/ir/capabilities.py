"""The capability tree and the curated gating rules (``schema/capability-rules.json``).

The schema states gating in prose, inconsistently; the rule table states it as data. Every
rule is checked against the schema at each generation: its subject and capability must exist
(or be unstable items absent from the stable build), its side and presence must match the
capability. Leaf capabilities that no rule mentions are reported (and fail in strict mode).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.ir import naming
from acpgen.load.capabilities import capability_properties
from acpgen.load.inventory import Node

_SUBJECT_KINDS: tuple[ir.SubjectKind, ...] = ("method", "field", "variant", "value")


def capability_tree(defs: Mapping[str, Node], unstable: frozenset[str]) -> tuple[ir.Capability, ...]:
    """Every property below ``agentCapabilities`` and ``clientCapabilities`` (``_meta`` aside), named:
    the attributes that reach it from the root model and its ``supports_...`` accessor."""
    return tuple(
        ir.Capability(
            path=p.path,
            owner=p.owner,
            root=p.root,
            presence=p.presence,
            attrs=tuple(naming.snake(wire) for wire in p.wires),
            accessor=naming.capability_accessor(p.path),
            leaf=p.leaf,
            stable=p.stable,
            description=p.description,
        )
        for p in capability_properties(defs, unstable)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class RuleTable:
    """A curated capability rule table and what checking it against one build needs."""

    table: Mapping[str, Any]
    origin: str
    """Where the table was read from (``schema/capability-rules.json``), for problems."""
    strict: bool
    """Fail when a leaf capability is neither gated by a rule nor listed as informational."""
    all_paths: frozenset[str]
    """Every capability path of the widest (unstable) schema of the revision."""


@dataclasses.dataclass(frozen=True, slots=True)
class Gating:
    """What the rule table makes of one build: its capabilities, rules and method gates."""

    capabilities: tuple[ir.Capability, ...]
    rules: tuple[ir.GatingRule, ...] = ()
    informational: tuple[tuple[str, str], ...] = ()
    ungated: tuple[str, ...] = ()
    gates: Mapping[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    """``(method wire name, side) -> capability path`` for the methods a capability gates."""


def gating(
    defs: Mapping[str, Node],
    types: tuple[ir.TypeDef, ...],
    methods: tuple[ir.Method, ...],
    table: RuleTable | None,
    all_unstable: frozenset[str],
) -> Gating:
    """The capability tree of one build and, given the rule table, the rules that apply to it.

    ``all_unstable`` (the revision's unstable items) and the table's ``all_paths`` tell a rule about
    an unstable item, left out of the stable build, from a rule about nothing at all.
    """
    capabilities = capability_tree(defs, all_unstable)
    if table is None:
        return Gating(capabilities=capabilities)
    scope = _RuleContext(
        types=types,
        methods=methods,
        by_path={c.path: c for c in capabilities},
        all_unstable=all_unstable,
        all_paths=table.all_paths,
        origin=table.origin,
    )
    rules, problems = _rules(table.table, scope)
    informational = tuple(sorted((str(k), str(v)) for k, v in (table.table.get("informational") or {}).items()))
    problems += [_unknown_informational(path, table.origin) for path, _ in informational if not scope.exists(path)]
    used = {r.capability.path for r in rules} | {p for p, _ in informational}
    ungated = tuple(c.path for c in capabilities if c.leaf and c.path not in used)
    if table.strict:
        problems += [_gates_nothing(path, table.origin) for path in ungated]
    if problems:
        raise AcpgenError(*problems)
    gates: dict[tuple[str, str], str] = {
        (r.subject, r.capability.owner): r.capability.path for r in rules if r.kind == "method"
    }
    return Gating(capabilities, tuple(rules), informational, ungated, gates)


@dataclasses.dataclass(frozen=True, slots=True)
class _RuleContext:
    """What checking one rule of the table needs to know."""

    types: tuple[ir.TypeDef, ...]
    methods: tuple[ir.Method, ...]
    by_path: Mapping[str, ir.Capability]
    """The capabilities of this build, by wire path."""
    all_unstable: frozenset[str]
    all_paths: frozenset[str]
    """Every capability path of the widest (unstable) schema."""
    origin: str

    def exists(self, path: str) -> bool:
        return path in self.by_path or path in self.all_paths

    def absent_here(self, key: str) -> bool:
        """An unstable subject that this build leaves out (the stable build, a selection of
        features): its rule is skipped."""
        return key in self.all_unstable


def _rules(table: Mapping[str, Any], scope: _RuleContext) -> tuple[list[ir.GatingRule], list[Problem]]:
    rules: list[ir.GatingRule] = []
    problems: list[Problem] = []
    for index, raw in enumerate(table["rules"]):
        try:
            rule = _resolve(raw, scope, f"{scope.origin}#{pointer('rules', index)}")
        except AcpgenError as error:
            problems.extend(error.problems)
            continue
        if rule is not None:
            rules.append(rule)
    return rules, problems


def _unknown_informational(path: str, origin: str) -> Problem:
    return Problem(
        what=f"informational capability {path!r} does not exist in the schema",
        where=f"{origin}#/informational",
        hint="Remove it or correct the path.",
    )


def _gates_nothing(path: str, origin: str) -> Problem:
    return Problem(
        what=f"capability {path!r} gates nothing in the rule table",
        where=f"{origin}#/rules",
        hint="A schema update added or changed it: add the rules it implies, or list it under `informational` "
        "with the reason it gates nothing.",
    )


def _resolve(raw: Any, scope: _RuleContext, where: str) -> ir.GatingRule | None:
    """One rule of the table, or None when its subject or capability is unstable and absent from this build."""
    if not isinstance(raw, Mapping):
        raise AcpgenError(Problem(what="a rule must be an object", where=where, hint="Fix the rule table."))
    kinds = [k for k in _SUBJECT_KINDS if k in raw]
    if len(kinds) != 1 or not isinstance(raw[kinds[0]], str):
        raise AcpgenError(
            Problem(
                what="a rule must name exactly one subject: method, field, variant or value",
                where=where,
                hint="Fix the rule.",
            )
        )
    kind, subject = kinds[0], raw[kinds[0]]
    capability = _capability(raw, subject, scope, where)
    if capability is None:
        return None
    rule = _locate(kind, subject, capability, scope)
    if rule is None:
        if scope.absent_here(_subject_key(kind, subject, raw.get("side"))):
            return None
        raise AcpgenError(
            Problem(
                what=f"rule subject {kind} {subject!r} does not exist in the schema",
                where=where,
                hint="Correct the subject (wire method name, Type.wireField, Union[tag], Enum=value) "
                "or remove the rule.",
            )
        )
    return rule


def _capability(raw: Mapping[str, Any], subject: str, scope: _RuleContext, where: str) -> ir.Capability | None:
    """The capability a rule needs, checked against the side and presence the rule states."""
    path = raw.get("needs")
    capability = scope.by_path.get(path) if isinstance(path, str) else None
    if capability is None:
        if isinstance(path, str) and path in scope.all_paths:
            return None  # an unstable capability this build leaves out: the rules that need it go too
        raise AcpgenError(
            Problem(
                what=f"rule for {subject!r} needs capability {path!r}, which the schema does not have",
                where=where,
                hint="Correct the capability path (wire names, from agentCapabilities or clientCapabilities).",
            )
        )
    if raw.get("side") != capability.owner or raw.get("presence") != capability.presence:
        raise AcpgenError(
            Problem(
                what=f"rule for {subject!r}: {path} is advertised by the {capability.owner} and judged "
                f"{capability.presence!r}, but the rule says side {raw.get('side')!r}, "
                f"presence {raw.get('presence')!r}",
                where=where,
                hint=f'Set "side": "{capability.owner}", "presence": "{capability.presence}".',
            )
        )
    return capability


def _subject_key(kind: str, subject: str, side: Any) -> str:
    return {
        "method": f"method:{side}:{subject}",
        "field": f"field:{subject}",
        "variant": f"variant:{subject}",
        "value": f"value:{subject}",
    }[kind]


def _locate(kind: str, subject: str, capability: ir.Capability, scope: _RuleContext) -> ir.GatingRule | None:
    types = {t.wire: t for t in scope.types}
    if kind == "method":
        if any(m.wire == subject and m.side == capability.owner for m in scope.methods):
            return ir.GatingRule(kind="method", subject=subject, capability=capability)
        return None
    if kind == "field":
        owner, _, wire = subject.partition(".")
        t = types.get(owner)
        f = next((f for f in t.fields if f.wire == wire), None) if t else None
        if t is None or f is None:
            return None
        return ir.GatingRule(kind="field", subject=subject, capability=capability, classes=_holders(t), attr=f.attr)
    if kind == "variant":
        union, _, key = subject.partition("[")
        t = types.get(union)
        v = next((v for v in t.variants if v.key == key.rstrip("]")), None) if t else None
        if v is None:
            return None
        classes = tuple(c for _, c, _ in v.spread) or (v.class_name,)
        return ir.GatingRule(kind="variant", subject=subject, capability=capability, classes=classes)
    enum, _, value = subject.partition("=")
    t = types.get(enum)
    if t is None or value not in t.enum_values:
        return None
    holders = [(h, f.attr) for o in scope.types for f in o.fields if f.ref == enum for h in _holders(o)]
    attrs = {a for _, a in holders}
    if len(attrs) != 1:
        return None
    return ir.GatingRule(
        kind="value",
        subject=subject,
        capability=capability,
        classes=tuple(sorted(h for h, _ in holders)),
        attr=attrs.pop(),
        value=value,
    )


def _holders(t: ir.TypeDef) -> tuple[str, ...]:
    """The classes that carry the fields of ``t`` (the union's branch classes for a union with shared fields)."""
    if t.kind == "union":
        return tuple(c for v in t.variants if v.hoisted for c in ([x for _, x, _ in v.spread] or [v.class_name]))
    return (t.class_name,)
