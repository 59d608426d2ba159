"""The capability rule table file (``capability-rules.json``): read, and its shape checked.

Generation then checks each rule against the schema (:func:`acpgen.ir.capabilities.attach_rules`)
and the spec diff compares two tables by subject; both rely on this shape:

- ``rules``: a list of objects, each naming exactly one subject (``method``, ``field``,
  ``variant`` or ``value``, a string) and the strings ``needs`` (a capability path), ``side``
  and ``presence``;
- ``informational`` (optional): an object mapping capability paths to the reason, a string.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.load.nesting import parse

RULES_FILE = "capability-rules.json"
SUBJECTS = ("method", "field", "variant", "value")
_STRINGS = ("needs", "side", "presence")


def load_rules(path: Path) -> dict[str, Any]:
    """The rule table at ``path``, checked for shape (not yet against a schema)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise AcpgenError(
            Problem(
                what=f"cannot read the capability rule table: {error}", where=str(path), hint="Fix or restore the file."
            )
        ) from None
    table = parse(text, str(path), what="the capability rule table", hint="Fix or restore the file.")
    check_rule_table(table, str(path))
    return table  # type: ignore[no-any-return]


def check_rule_table(table: Any, origin: str) -> None:
    """Raise :class:`AcpgenError` listing every place where ``table`` (read from ``origin``) has the wrong shape."""
    if not isinstance(table, Mapping) or not isinstance(table.get("rules"), list):
        raise AcpgenError(
            Problem(
                what="the rule table must be an object with a `rules` list", where=f"{origin}#", hint="Fix the file."
            )
        )
    problems = [p for index, rule in enumerate(table["rules"]) for p in _rule_problems(rule, origin, index)]
    informational = table.get("informational", {})
    if not isinstance(informational, Mapping):
        problems.append(
            Problem(
                what="`informational` must be an object mapping capability paths to the reason they gate nothing",
                where=f"{origin}#/informational",
                hint="Fix the rule table.",
            )
        )
    else:
        problems += [
            Problem(
                what=f"the reason given for informational capability {path!r} must be a string",
                where=f"{origin}#{pointer('informational', path)}",
                hint="Say in words why the capability gates nothing.",
            )
            for path, reason in informational.items()
            if not isinstance(reason, str)
        ]
    if problems:
        raise AcpgenError(*problems)


def _rule_problems(rule: Any, origin: str, index: int) -> list[Problem]:
    where = f"{origin}#{pointer('rules', index)}"
    if not isinstance(rule, Mapping):
        return [Problem(what="a rule must be an object", where=where, hint="Fix the rule table.")]
    subjects = [k for k in SUBJECTS if k in rule]
    problems = []
    if len(subjects) != 1 or not isinstance(rule[subjects[0]], str):
        problems.append(
            Problem(
                what="a rule must name exactly one subject: method, field, variant or value",
                where=where,
                hint="Fix the rule.",
            )
        )
    problems += [
        Problem(
            what=f"a rule's `{key}` must be a string, not {type(rule.get(key)).__name__}",
            where=f"{where}/{key}",
            hint='Give every rule "needs" (a capability path), "side" (agent or client) '
            'and "presence" (true or present).',
        )
        for key in _STRINGS
        if not isinstance(rule.get(key), str)
    ]
    return problems
