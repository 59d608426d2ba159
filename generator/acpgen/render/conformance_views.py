"""Template data for the conformance kit (``conformance.py``, with the ``conformance`` tool): the
build's requirements (the IR's, :mod:`acpgen.ir.requirements`), the kit's modules the build holds
(:mod:`acpgen.ir.conformance_checks`: its checks, scenarios and probe steps), what the judge needs
of the schema (each method's definitions, the members that hold absolute paths and 1-based lines,
the names of ``initialize``'s members), and the build's schema document itself (``_schema.json``),
which the kit judges every message against."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator

from acpgen import ir
from acpgen.ir.conformance_checks import held

SCHEMA_FILE = "_schema.json"
"""The build's schema, beside ``conformance.py``."""
_ABSOLUTE = re.compile(r"\babsolute\b", re.IGNORECASE)
_ONE_BASED = re.compile(r"\b1-based\b", re.IGNORECASE)
PATH_MEMBERS = frozenset({"path", "cwd", "additionalDirectories"})
"""The members that name file system paths (the schema also calls an MCP server's command an
absolute path; that is no path of the session's, and clients send bare names there)."""


def conformance_data(protocol: ir.Protocol, package: str) -> dict[str, object]:
    tiers = Counter(r.tier for r in protocol.requirements)
    derived = sum(r.source != "curated" for r in protocol.requirements)
    judged = sum(bool(r.checks) for r in protocol.requirements)
    counts = (
        f"{len(protocol.requirements)} requirements ({derived} derived from the schema; "
        + ", ".join(f"{tiers[t]} {t}" for t in ir.TIERS if tiers[t])
        + f"; {judged} judged by the kit)"
    )
    modules = held(frozenset(m.wire for m in protocol.methods))
    return {
        "requirements": protocol.requirements,
        "package": package,
        "counts": counts,
        "modules": [m.name for m in modules],
        "checked": [m.name for m in modules if m.checks],
        "scenarios": [m.name for m in modules if m.scenarios],
        "steps": [m.name for m in modules if m.steps],
        "authenticate": any(m.name == "agent_authenticate" for m in modules),
        "definitions": {f"{m.side} {m.wire}": (m.params, m.result) for m in protocol.methods},
        "absolute_paths": dict(_members(protocol, _ABSOLUTE, PATH_MEMBERS)),
        "one_based": dict(_members(protocol, _ONE_BASED, None)),
        "catch_alls": sorted({v.class_name for t in protocol.types for v in t.variants if v.catch_all}),
        "wire": _initialize_members(protocol),
        "schema_file": SCHEMA_FILE,
    }


def schema_document(protocol: ir.Protocol) -> str:
    """The build's schema as JSON text: its root and its definitions, as the schema writes them."""
    defs = {t.wire: t for t in protocol.types}
    order = [name for name in protocol.definition_order if name in defs]
    document = {**protocol.root, "$defs": {name: defs[name].node for name in order}}
    return json.dumps(document, indent=1, sort_keys=False) + "\n"


def _members(
    protocol: ir.Protocol, said: re.Pattern[str], only: frozenset[str] | None
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Model class -> the attributes whose description says ``said`` (of ``only`` wire names)."""
    owners: list[tuple[str, tuple[ir.Field, ...]]] = []
    for t in protocol.types:
        owners.append((t.class_name, t.fields))
        owners += [(v.class_name, v.fields) for v in t.variants]
    for name, fields in owners:
        attrs = tuple(f.attr for f in fields if said.search(f.description) and (only is None or f.wire in only))
        if attrs:
            yield name, attrs


def _initialize_members(protocol: ir.Protocol) -> dict[str, str]:
    """The wire names of ``initialize``'s capabilities and implementation members, both ways."""
    found = {}
    method = next((m for m in protocol.methods if m.wire == "initialize"), None)
    if method is None:
        return {}
    for part, side in ((method.params, "client"), (method.result, "agent")):
        if part is None:
            continue
        for f in protocol.type(part).fields:
            if f.ref is not None and f.ref.endswith("Capabilities"):
                found[f"{side}_capabilities"] = f.wire
            elif f.ref == "Implementation":
                found[f"{side}_info"] = f.wire
    return found
