"""The conformance requirements of one build: derived from the schema's tables, and curated.

Derived, so that a schema revision that adds methods or capabilities adds their requirements
with no change here (ids from the subject's name, :func:`slug`):

- ``message-form``, ``message-params``, ``message-result``: every method of the method table is
  sent as the request or notification it is, with params valid against the schema wherever it
  requires a value, and answered (requests) with such a result (``ACP-MSG-<HANDLER>-<METHOD>-FORM|
  PARAMS|RESULT``, MANDATORY); ``message-params-optional``, ``message-result-optional``: their
  optional members valid too (``...-PARAMS-OPTIONAL|RESULT-OPTIONAL``, ADVISORY);
- ``required-handler``: a method every handler must implement (:mod:`acpgen.ir.required`) is not
  answered "method not found"; one a handler may leave out because the peer needs an identifier
  it hands out is a CAPABILITY requirement that applies once it did (``ACP-HANDLER-<SIDE>-<METHOD>``);
- ``capability-gate`` and ``capability-honor``: each rule of the capability rule table, both ways:
  the peer uses the subject only once the side advertised the capability, and the side that did
  accepts it (``ACP-CAP-<SUBJECT>-GATE|HONOR``);
- ``closed-enum`` and ``closed-union``: a value or variant the schema does not list is never sent
  (``ACP-ENUM-<TYPE>``, ``ACP-UNION-<TYPE>``).

Curated: ``schema/conformance-requirements.json``, what the spec requires that no table states.
Every entry is checked against the build's schema, as the capability rules are: an entry naming a
method, field, variant, value, type or capability that the schema lacks is a :class:`Problem`; one
naming an unstable item that this build leaves out is dropped from it. Two requirements with one
id are a problem too.

Each requirement lists the checks of the build's conformance kit that judge it
(:mod:`acpgen.ir.conformance_checks`): a curated entry's ``check`` must name registered checks that
declare its id, and every id a check declares must be an entry that names the check (either way a
:class:`Problem` with the file and pointer); a derived one gets the checks that judge its family or
subject. A requirement with no check is one the kit does not judge, and says so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.ir.conformance_checks import KIT, all_checks, build_checks
from acpgen.ir.required import ROLE_SIDES, optional_methods
from acpgen.runtime.tools.conformance.registry import CheckSpec

SITE = "https://agentclientprotocol.com"
FAMILIES = (
    "message-form",
    "message-params",
    "message-result",
    "message-params-optional",
    "message-result-optional",
    "required-handler",
    "capability-gate",
    "capability-honor",
    "closed-enum",
    "closed-union",
)
_HANDLERS: tuple[ir.Side, ...] = ("agent", "client", "protocol", "both")


@dataclasses.dataclass(frozen=True, slots=True)
class RequirementTable:
    """The curated table and what checking it against one build needs."""

    table: Mapping[str, Any]
    origin: str
    all_paths: frozenset[str]
    """Every capability path of the widest (unstable) schema of the revision."""


def slug(name: str) -> str:
    """An id part from a name: a hyphen at each lower-to-upper change and for every other character,
    upper-cased (``session/set_mode`` -> ``SESSION-SET-MODE``, ``ContentBlock[image]`` ->
    ``CONTENT-BLOCK-IMAGE``)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)
    return re.sub(r"[^A-Za-z0-9]+", "-", spaced).strip("-").upper()


def requirements(
    protocol: ir.Protocol, table: RequirementTable | None, all_unstable: frozenset[str]
) -> tuple[ir.Requirement, ...]:
    """Every requirement of ``protocol``'s build: the curated ones that apply to it, then the
    derived ones family by family."""
    citations = _derived_citations(table)
    checks = build_checks(frozenset(m.wire for m in protocol.methods))
    found: list[ir.Requirement] = []
    problems: list[Problem] = []
    if table is not None:
        problems += registry_problems(table)
        for index, raw in enumerate(table.table["requirements"]):
            where = f"{table.origin}#{pointer('requirements', index)}"
            try:
                entry = _curated(raw, protocol, table.all_paths, all_unstable, where)
            except AcpgenError as error:
                problems.extend(error.problems)
                continue
            if entry is not None:
                found.append(dataclasses.replace(entry, checks=tuple(c for c in raw["check"] if c in checks)))
    found += [_judged_by(r, checks) for r in _derived(protocol, citations)]
    seen: dict[str, int] = {}
    for r in found:
        seen[r.id] = seen.get(r.id, 0) + 1
    problems += [
        Problem(
            what=f"two conformance requirements have the id {rid!r}",
            where=table.origin if table is not None else "the schema's derived requirements",
            hint="Give the curated requirement another id (ids are never reused).",
        )
        for rid, count in seen.items()
        if count > 1
    ]
    if problems:
        raise AcpgenError(*problems)
    return tuple(found)


def registry_problems(table: RequirementTable) -> list[Problem]:
    """Where the table's ``check`` names and the kit's registry disagree."""
    known = all_checks()
    problems = []
    for index, raw in enumerate(table.table["requirements"]):
        for at, name in enumerate(raw["check"]):
            where = f"{table.origin}#{pointer('requirements', index, 'check', at)}"
            check = known.get(name)
            if check is None:
                problems.append(
                    Problem(
                        what=f"requirement {raw['id']} names the check {name!r}, which the conformance kit lacks",
                        where=where,
                        hint=f"Name a registered check ({KIT} modules' CHECKS), or drop it.",
                    )
                )
            elif raw["id"] not in check.judges:
                problems.append(
                    Problem(
                        what=f"requirement {raw['id']} names the check {name!r}, which does not judge it",
                        where=where,
                        hint=f"Add {raw['id']!r} to the check's `judges`, or drop the name here.",
                    )
                )
    for index, raw in enumerate(table.table["requirements"]):
        for name in sorted(c.name for c in known.values() if raw["id"] in c.judges and c.name not in raw["check"]):
            problems.append(
                Problem(
                    what=f"the kit's check {name!r} judges {raw['id']}, but its `check` does not name it",
                    where=f"{table.origin}#{pointer('requirements', index, 'check')}",
                    hint=f"Add {name!r} to the list.",
                )
            )
    return problems


def _judged_by(requirement: ir.Requirement, checks: dict[str, CheckSpec]) -> ir.Requirement:
    """A derived requirement with the build's checks that judge it."""
    names = tuple(c.name for c in checks.values() if c.covers(requirement.family, requirement.subject))
    return dataclasses.replace(requirement, checks=names)


def _derived_citations(table: RequirementTable | None) -> dict[str, ir.Citation]:
    raw = (table.table.get("derived_citations") or {}) if table is not None else {}
    return {path: ir.Citation(c["page"], c["section"], c["url"]) for path, c in raw.items()}


# --- curated -------------------------------------------------------------------------------------


def _curated(
    raw: Mapping[str, Any],
    protocol: ir.Protocol,
    all_paths: frozenset[str],
    all_unstable: frozenset[str],
    where: str,
) -> ir.Requirement | None:
    """One curated entry checked against the build, or None when it names an unstable item the
    build leaves out."""
    missing: list[Problem] = []
    absent = False
    for kind, item, key in _references(raw):
        if _exists(protocol, kind, item):
            continue
        if (kind == "capability" and item in all_paths) or key in all_unstable:
            absent = True
            continue
        missing.append(
            Problem(
                what=f"requirement {raw['id']} names the {kind} {item!r}, which the schema does not have",
                where=where,
                hint="Correct the name (wire names: method and side, Type.wireField, Union[tag], Enum=value, "
                "a $defs type, a capability path) or remove the requirement.",
            )
        )
    if missing:
        raise AcpgenError(*missing)
    if absent:
        return None
    c = raw["citation"]
    return ir.Requirement(
        id=raw["id"],
        tier=raw["tier"],
        side=raw["side"],
        what=raw["what"],
        citation=ir.Citation(c["page"], c["section"], c["url"]),
        source="curated",
        applies_when=tuple(raw.get("applies_when", ())),
        acp_tck=raw.get("acp_tck", ""),
    )


def _references(raw: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """``(kind, item, unstable item key)`` for every schema item an entry names."""
    schema = raw.get("schema", {})
    for m in schema.get("methods", ()):
        yield "method", f"{m['method']} ({m['side']})", f"method:{m['side']}:{m['method']}"
    for name in schema.get("fields", ()):
        yield "field", name, f"field:{name}"
    for name in schema.get("variants", ()):
        yield "variant", name, f"variant:{name}"
    for name in schema.get("values", ()):
        yield "value", name, f"value:{name}"
    for name in schema.get("types", ()):
        yield "type", name, f"type:{name}"
    for path in schema.get("capabilities", ()):
        yield "capability", path, ""
    for condition in raw.get("applies_when", ()):
        if condition.startswith("inferred:"):
            name = condition.removeprefix("inferred:")
            yield "type", name, f"type:{name}"
        else:
            yield "capability", condition, ""


def _exists(protocol: ir.Protocol, kind: str, item: str) -> bool:
    types = {t.wire: t for t in protocol.types}
    if kind == "method":
        wire, _, side = item.rpartition(" (")
        return any(m.wire == wire and m.side == side.rstrip(")") for m in protocol.methods)
    if kind == "capability":
        return any(c.path == item for c in protocol.capabilities)
    if kind == "type":
        return item in types
    if kind == "field":
        owner, _, wire = item.partition(".")
        t = types.get(owner)
        return t is not None and any(f.wire == wire for f in (*t.fields, *(f for v in t.variants for f in v.fields)))
    if kind == "variant":
        union, _, key = item.partition("[")
        t = types.get(union)
        return t is not None and any(v.key == key.rstrip("]") for v in t.variants)
    enum, _, value = item.partition("=")
    t = types.get(enum)
    if t is None:
        return False
    if enum == "ErrorCode" and any(str(code.value) == value for code in protocol.error_codes):
        return True
    return value in t.enum_values or any(v.key == value for v in t.variants)


# --- derived -------------------------------------------------------------------------------------


def _derived(protocol: ir.Protocol, citations: Mapping[str, ir.Citation]) -> list[ir.Requirement]:
    """The derived requirements, family by family."""
    methods = [m for m in protocol.methods if m.side in _HANDLERS]
    names = _method_names(methods)
    return [
        *_message_requirements(protocol, methods, names),
        *_handler_requirements(protocol, methods, names),
        *_rule_requirements(protocol, citations),
        *_closed_requirements(protocol),
    ]


def _method_names(methods: list[ir.Method]) -> dict[tuple[str, str, str, str], str]:
    """Each method's part of an id: its kind too when its name has a request and a
    notification, its params type when even that repeats (a schema can say anything)."""

    def count(key: tuple[str, ...]) -> int:
        return sum((n.wire, n.side, n.kind)[: len(key)] == key for n in methods)

    found: dict[tuple[str, str, str, str], str] = {}
    for m in methods:
        if count((m.wire, m.side, m.kind)) > 1:
            part = f"{slug(m.wire)}-{slug(m.params)}"
        else:
            part = slug(m.wire) + (f"-{m.kind.upper()}" if count((m.wire, m.side)) > 1 else "")
        found[(m.wire, m.side, m.kind, m.params)] = part
    return found


def _message_requirements(
    protocol: ir.Protocol, methods: list[ir.Method], names: Mapping[tuple[str, str, str, str], str]
) -> list[ir.Requirement]:
    found: list[ir.Requirement] = []
    for m in methods:
        sender = _peer(m.side)
        cite = _schema_citation(protocol, m.params, m.wire, m.stable)
        base = f"ACP-MSG-{slug(m.side)}-{names[(m.wire, m.side, m.kind, m.params)]}"
        shape = "a request, with an id, answered once" if m.kind == "request" else "a notification, with no id"
        found.append(
            _make("message-form", f"{base}-FORM", "MANDATORY", sender, f"`{m.wire}` is sent as {shape}.", cite, m.wire)
        )
        parts = [("params", sender, f"Every `{m.wire}` sent has params", m.params)]
        if m.result is not None:
            parts.append(("result", _judged(m.side), f"Every successful answer to `{m.wire}` is a result", m.result))
        for part, side, text, model in parts:
            found.append(
                _make(
                    f"message-{part}",
                    f"{base}-{part.upper()}",
                    "MANDATORY",
                    side,
                    f"{text} valid against the schema's `{model}` wherever it requires a value (the generated "
                    "models read it too).",
                    cite,
                    m.wire,
                )
            )
            found.append(
                _make(
                    f"message-{part}-optional",
                    f"{base}-{part.upper()}-OPTIONAL",
                    "ADVISORY",
                    side,
                    f"{text} whose optional members are valid against the schema's `{model}` too (a value "
                    "a lenient reader forgives is still wrong).",
                    cite,
                    m.wire,
                )
            )
    return found


def _handler_requirements(
    protocol: ir.Protocol, methods: list[ir.Method], names: Mapping[tuple[str, str, str, str], str]
) -> list[ir.Requirement]:
    found: list[ir.Requirement] = []
    optional = optional_methods(protocol)
    for m in methods:
        why = optional.get((m.wire, m.side))
        if m.side not in (*ROLE_SIDES, "protocol") or (why is not None and why.identifier is None):
            continue
        answer = (
            'is answered with something other than "method not found"'
            if m.kind == "request"
            else ("is accepted, with no answer, and the connection stays usable")
        )
        cite = _schema_citation(protocol, m.params, m.wire, m.stable)
        rid = f"ACP-HANDLER-{slug(m.side)}-{names[(m.wire, m.side, m.kind, m.params)]}"
        if why is None:
            what = f"The {_judged(m.side)} implements `{m.wire}`: it {answer}."
            found.append(_make("required-handler", rid, "MANDATORY", _judged(m.side), what, cite, m.wire))
        else:
            what = f"Once the {m.side} handed out a `{why.identifier}`, `{m.wire}` called with it {answer}."
            found.append(
                _make(
                    "required-handler",
                    rid,
                    "CAPABILITY",
                    _judged(m.side),
                    what,
                    cite,
                    m.wire,
                    applies_when=(f"inferred:{why.identifier}",),
                )
            )
    return found


def _rule_requirements(protocol: ir.Protocol, citations: Mapping[str, ir.Citation]) -> list[ir.Requirement]:
    found: list[ir.Requirement] = []
    for rule in protocol.rules:
        owner = rule.capability.owner
        path = rule.capability.path
        judged = "is true" if rule.capability.presence == "true" else "is present"
        cite = _capability_citation(protocol, path, citations)
        found.append(
            _make(
                "capability-gate",
                f"ACP-CAP-{slug(rule.subject)}-GATE",
                "MANDATORY",
                _peer(owner),
                f"The {_peer(owner)} sends {_words(rule)} only once the {owner} advertised `{path}` (it {judged}).",
                cite,
                rule.subject,
            )
        )
        found.append(
            _make(
                "capability-honor",
                f"ACP-CAP-{slug(rule.subject)}-HONOR",
                "CAPABILITY",
                owner,
                f"{_article(owner)} {owner} that advertised `{path}` accepts {_words(rule)}: "
                'not answered "method not found" or "invalid params" for it.',
                cite,
                rule.subject,
                applies_when=(path,),
            )
        )
    return found


def _closed_requirements(protocol: ir.Protocol) -> list[ir.Requirement]:
    found: list[ir.Requirement] = []
    for t in protocol.types:
        if t.open or t.kind not in ("enum", "union"):
            continue
        cite = _schema_citation(protocol, t.wire, t.wire, t.stable)
        if t.kind == "enum" and t.enum_values and not t.integer:
            values = ", ".join(f"`{v}`" for v in t.enum_values)
            what = f"Every `{t.wire}` sent where the schema requires it is one of {values}."
            found.append(
                _make(
                    "closed-enum",
                    f"ACP-ENUM-{slug(t.wire)}",
                    "MANDATORY",
                    _writers(protocol, t.wire),
                    what,
                    cite,
                    t.wire,
                )
            )
        elif t.kind == "union" and t.discriminator and not any(v.catch_all for v in t.variants):
            tags = ", ".join(f"`{v.key}`" for v in t.variants)
            what = (
                f"Every `{t.wire}` sent where the schema requires it carries one of the "
                f"`{t.discriminator}` tags {tags}."
            )
            found.append(
                _make(
                    "closed-union",
                    f"ACP-UNION-{slug(t.wire)}",
                    "MANDATORY",
                    _writers(protocol, t.wire),
                    what,
                    cite,
                    t.wire,
                )
            )
    return found


def _make(
    family: str,
    rid: str,
    tier: ir.Tier,
    side: ir.Judged,
    what: str,
    citation: ir.Citation,
    subject: str,
    applies_when: tuple[str, ...] = (),
) -> ir.Requirement:
    return ir.Requirement(
        id=rid,
        tier=tier,
        side=side,
        what=what,
        citation=citation,
        source=f"derived:{family}",
        applies_when=applies_when,
        subject=subject,
    )


def _peer(side: str) -> ir.Judged:
    return "client" if side == "agent" else "agent" if side == "client" else "both"


def _judged(side: str) -> ir.Judged:
    return "agent" if side == "agent" else "client" if side == "client" else "both"


def _writers(protocol: ir.Protocol, wire: str) -> ir.Judged:
    sides = protocol.writers.get(wire, frozenset())
    return next(iter(sides)) if len(sides) == 1 else "both"


def _article(word: str) -> str:
    return "An" if word[:1].lower() in "aeiou" else "A"


def _words(rule: ir.GatingRule) -> str:
    return {
        "method": f"`{rule.subject}`",
        "field": f"the field `{rule.subject}`",
        "variant": f"the variant `{rule.subject}`",
        "value": f"the value `{rule.subject}`",
    }[rule.kind]


def _schema_citation(protocol: ir.Protocol, definition: str, section: str, stable: bool) -> ir.Citation:
    """The schema page's section of a method or type; for a draft protocol (v2), whose pages are not
    published, the pinned schema's definition."""
    if protocol.experimental:
        return ir.Citation("pinned schema", definition, f"{protocol.source.file}#/$defs/{definition}")
    anchor = re.sub(r"[^a-z0-9_]+", "-", section.lower()).strip("-")
    draft = "" if stable else "draft/"
    return ir.Citation("Schema", section, f"{SITE}/protocol/v{protocol.protocol_version}/{draft}schema#{anchor}")


def _capability_citation(protocol: ir.Protocol, path: str, citations: Mapping[str, ir.Citation]) -> ir.Citation:
    prefixes = [p for p in citations if path == p or path.startswith(p + ".")]
    if prefixes:
        return citations[max(prefixes, key=len)]
    capability = next(c for c in protocol.capabilities if c.path == path)
    return _schema_citation(protocol, capability.root, capability.root, capability.stable)
