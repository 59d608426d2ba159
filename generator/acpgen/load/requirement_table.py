"""The curated conformance requirement table file (``conformance-requirements.json``): read, and
its shape checked (generation then checks each entry against the schema of every build,
:mod:`acpgen.ir.requirements`).

- ``requirements``: a list of objects, each with the strings ``id`` (``ACP-...``), ``tier``
  (MANDATORY, CAPABILITY, ADVISORY, INFORMATIONAL), ``side`` (agent, client, both: the side it
  judges) and ``what``, ``check`` (the names of the kit's registered checks that judge it,
  resolved against the kit's registry at generation; empty: the kit does not judge it), a
  ``citation`` (``page``, ``section``, ``url``), optionally ``applies_when`` (a list of capability paths or
  ``inferred:<type>``; a CAPABILITY requirement needs it), ``schema`` (the items it names:
  ``methods`` as ``{"method", "side"}`` objects, ``fields`` ``Type.wireField``, ``variants``
  ``Union[tag]``, ``values`` ``Enum=value``, ``types``, ``capabilities``) and ``acp_tck``;
- ``derived_citations`` (optional): capability path -> citation, for the requirements derived
  from the capability rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.load.nesting import parse

REQUIREMENTS_FILE = "conformance-requirements.json"
TIERS = ("MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL")
JUDGED = ("agent", "client", "both")
SCHEMA_LISTS = ("methods", "fields", "variants", "values", "types", "capabilities")
_ID = re.compile(r"^ACP-[A-Z0-9]+(-[A-Z0-9]+)*$")
_HINT = "Fix the entry (see the comment at the top of the file)."


def load_requirements(path: Path) -> dict[str, Any]:
    """The requirement table at ``path``, checked for shape (not yet against a schema)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise AcpgenError(
            Problem(what=f"cannot read the conformance requirement table: {error}", where=str(path), hint=_HINT)
        ) from None
    table = parse(text, str(path), what="the conformance requirement table", hint="Fix or restore the file.")
    check_requirement_table(table, str(path))
    return table  # type: ignore[no-any-return]


def check_requirement_table(table: Any, origin: str) -> None:
    """Raise :class:`AcpgenError` listing every place where ``table`` has the wrong shape."""
    if not isinstance(table, Mapping) or not isinstance(table.get("requirements"), list):
        raise AcpgenError(
            Problem(
                what="the requirement table must be an object with a `requirements` list",
                where=f"{origin}#",
                hint="Fix the file.",
            )
        )
    problems = [p for i, entry in enumerate(table["requirements"]) for p in _entry_problems(entry, origin, i)]
    citations = table.get("derived_citations", {})
    if not isinstance(citations, Mapping):
        problems.append(
            Problem(what="`derived_citations` must be an object", where=f"{origin}#/derived_citations", hint=_HINT)
        )
    else:
        for path, citation in citations.items():
            problems += _citation_problems(citation, f"{origin}#{pointer('derived_citations', path)}")
    if problems:
        raise AcpgenError(*problems)


def _citation_problems(citation: Any, where: str) -> list[Problem]:
    if isinstance(citation, Mapping) and all(
        isinstance(citation.get(k), str) and citation[k] for k in ("page", "section", "url")
    ):
        return []
    return [
        Problem(what="a citation must be an object with the strings page, section and url", where=where, hint=_HINT)
    ]


def _entry_problems(entry: Any, origin: str, index: int) -> list[Problem]:
    where = f"{origin}#{pointer('requirements', index)}"
    if not isinstance(entry, Mapping):
        return [Problem(what="a requirement must be an object", where=where, hint=_HINT)]
    problems = [
        Problem(what=f"a requirement's `{key}` must be a non-empty string", where=f"{where}/{key}", hint=_HINT)
        for key in ("id", "tier", "side", "what")
        if not isinstance(entry.get(key), str) or not entry[key]
    ]
    checks = entry.get("check")
    if not isinstance(checks, list) or not all(isinstance(c, str) and c for c in checks):
        problems.append(
            Problem(
                what="a requirement's `check` must be a list of the names of the kit's checks that judge it "
                "(empty: the kit does not judge it)",
                where=f"{where}/check",
                hint=_HINT,
            )
        )
    if isinstance(entry.get("id"), str) and not _ID.match(entry["id"]):
        problems.append(
            Problem(
                what=f"requirement id {entry['id']!r} is not of the form ACP-AREA-NNN", where=f"{where}/id", hint=_HINT
            )
        )
    if isinstance(entry.get("tier"), str) and entry["tier"] not in TIERS:
        problems.append(
            Problem(
                what=f"unknown tier {entry['tier']!r}", where=f"{where}/tier", hint=f"Use one of {', '.join(TIERS)}."
            )
        )
    if isinstance(entry.get("side"), str) and entry["side"] not in JUDGED:
        problems.append(
            Problem(
                what=f"unknown side {entry['side']!r}", where=f"{where}/side", hint=f"Use one of {', '.join(JUDGED)}."
            )
        )
    problems += _citation_problems(entry.get("citation"), f"{where}/citation")
    problems += _applies_problems(entry, where)
    problems += _schema_problems(entry, where)
    if "acp_tck" in entry and not isinstance(entry["acp_tck"], str):
        problems.append(Problem(what="`acp_tck` must be a string", where=f"{where}/acp_tck", hint=_HINT))
    return problems


def _applies_problems(entry: Mapping[str, Any], where: str) -> list[Problem]:
    """What is wrong with a requirement's ``applies_when``."""
    applies = entry.get("applies_when", [])
    if not isinstance(applies, list) or not all(isinstance(a, str) and a for a in applies):
        return [
            Problem(
                what="`applies_when` must be a list of capability paths or inferred:<type>",
                where=f"{where}/applies_when",
                hint=_HINT,
            )
        ]
    if entry.get("tier") == "CAPABILITY" and not applies:
        return [
            Problem(
                what="a CAPABILITY requirement must state when it applies (`applies_when`)",
                where=f"{where}/applies_when",
                hint="Give the capability paths (or inferred:<identifier type>) it applies under.",
            )
        ]
    return []


def _schema_problems(entry: Mapping[str, Any], where: str) -> list[Problem]:
    """What is wrong with a requirement's ``schema`` lists."""
    schema = entry.get("schema", {})
    if not isinstance(schema, Mapping) or set(schema) - set(SCHEMA_LISTS):
        return [
            Problem(
                what=f"`schema` must be an object of the lists {', '.join(SCHEMA_LISTS)}",
                where=f"{where}/schema",
                hint=_HINT,
            )
        ]
    problems = []
    for key, items in schema.items():
        good = isinstance(items, list) and all(
            (isinstance(i, Mapping) and isinstance(i.get("method"), str) and isinstance(i.get("side"), str))
            if key == "methods"
            else isinstance(i, str)
            for i in items
        )
        if not good:
            problems.append(
                Problem(what=f"`schema.{key}` has the wrong shape", where=f"{where}/schema/{key}", hint=_HINT)
            )
    return problems
