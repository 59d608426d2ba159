"""Compare the two readings of each case, and check that what our models dump is the wire.

Agreement means: both readers accept, or both refuse; and where both accept, the values they
read are equal after this normalisation (``normalised``):

1. an object member whose value is ``null`` is dropped: zod returns ``undefined`` (nothing) for
   an optional property that is absent or fell back to its default, where our models hold
   ``None``; both mean "no value", and a required property's null is kept by both;
2. numbers compare by value (``3 == 3.0``: JavaScript has one number type) and booleans are not
   numbers.

Nothing else is normalised: JavaScript's rounding of integers beyond 2^53 is a difference (the
``unsafe_integer`` feature of a finding lets the exclusions name it).

Where both accept, our dump (``wire``) must also be the wire (item 4 of issue 12):

- ``wire-invalid``: it validates against the JSON schema;
- ``wire-rereads``: our models read it back as the same value;
- ``wire-sdk-reads``: the SDK reads it as it read the input;
- ``wire-not-input``: it reproduces the input: exactly for a valid instance and for the kinds
  that change no value (an extra field, which the models keep as an unknown member; an integral
  float, which dumps as the integer; an integer given for a double, which dumps as that double);
  for the other mutants (lenient fallbacks, which dump the default they read as), it writes no
  member that the input lacked.

A case whose readings differ only by unknown members that we keep and the SDK drops
(``sdk_drops_unknown``) is a finding (the exclusions name it) and still has its dump checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.support.differential.cases import VALID, Case
from tests.support.differential.readers import Reading

SAFE_INTEGER = 2**53 - 1
EXACT_KINDS = frozenset({VALID, "extra-field", "integral-float"})

OUTCOMES = {
    "crash": "a reader raised something other than a validation error",
    "sdk-rejects": "our models accept what the SDK rejects",
    "sdk-accepts": "our models reject what the SDK accepts",
    "values-differ": "both accept, and read different values",
    "wire-invalid": "our dump does not validate against the schema",
    "wire-rereads": "our models read our dump as another value",
    "wire-sdk-reads": "the SDK reads our dump as another value than the input",
    "wire-not-input": "our dump does not reproduce the input",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """A case on which something differs: the case, what differs, and features to match exclusions on."""

    case: Case
    outcome: str
    ours: str
    sdk: str
    sdk_subset: bool = False
    """Both read the input, and every member the SDK read we read too, the same (we read more)."""
    difference: str = ""
    """Where the values read first differ: a dotted path (``url``, ``result.configOptions.0``)."""
    sdk_drops_unknown: bool = False
    """Both read the input, and the values differ only by members the schema does not name, which
    our models keep (``model_extra``) and the SDK dropped."""

    @property
    def unsafe_integer(self) -> bool:
        """The input holds an integer beyond 2^53 in magnitude, which JavaScript cannot represent."""
        return _has_unsafe_integer(self.case.value)

    def describe(self) -> str:
        about = f"{self.outcome} ({OUTCOMES[self.outcome]}): {self.case.describe()}"
        return f"{about}\n    ours: {self.ours}\n    sdk:  {self.sdk}"


def normalised(value: Any, *, drop_null: bool = True) -> Any:
    """A value read, with null object members dropped and numbers compared by value (see the module doc)."""
    if isinstance(value, dict):
        return {
            key: normalised(item, drop_null=drop_null)
            for key, item in value.items()
            if item is not None or not drop_null
        }
    if isinstance(value, list):
        return [normalised(item, drop_null=drop_null) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ("number", float(value) if abs(value) <= SAFE_INTEGER else value)
    return value


def agreement(case: Case, ours: Reading, sdk: Reading) -> Finding | None:
    """How the readers disagree on ``case``, if they do."""
    if ours.crashed or sdk.crashed:
        return Finding(case, "crash", _summary(ours), _summary(sdk))
    if ours.accepted != sdk.accepted:
        return Finding(case, "sdk-rejects" if ours.accepted else "sdk-accepts", _summary(ours), _summary(sdk))
    if ours.accepted and normalised(ours.value) != normalised(sdk.value):
        mine, theirs = normalised(ours.value), normalised(sdk.value)
        subset = _members_within(theirs, mine, exact=True)
        where = ".".join(map(str, _first_difference(mine, theirs) or ()))
        dropped = normalised(_without_dropped(ours.value, ours.unknown, sdk.value)) == theirs
        return Finding(case, "values-differ", _summary(ours), _summary(sdk), subset, where, dropped)
    return None


def _without_dropped(value: Any, unknown: tuple[tuple[Any, ...], ...], other: Any) -> Any:
    """``value`` without the unknown members (paths in it) that ``other`` lacks at the same place."""
    for path in sorted(unknown, key=len, reverse=True):
        if not _holds(other, path):
            value = _without(value, path)
    return value


def _holds(value: Any, path: tuple[Any, ...]) -> bool:
    for step in path:
        inside = isinstance(value, dict) and step in value
        if not inside and not (isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)):
            return False
        value = value[step]
    return True


def wire_findings(
    case: Case, ours: Reading, reread: Reading, sdk: Reading, sdk_wire: Reading, valid: bool
) -> list[Finding]:
    """What is wrong with our dump of a case both readers accept (see the module doc)."""
    assert ours.wire is not None
    wire = json.loads(ours.wire)
    checks = {
        "wire-invalid": not valid,
        "wire-rereads": not reread.accepted or normalised(reread.value) != normalised(ours.value),
        "wire-sdk-reads": not sdk_wire.accepted or normalised(sdk_wire.value) != normalised(sdk.value),
        "wire-not-input": not _reproduces(case, wire),
    }
    dumped = f"dump {ours.wire}"
    return [Finding(case, name, dumped, _summary(sdk_wire)) for name, failed in checks.items() if failed]


def _reproduces(case: Case, wire: Any) -> bool:
    given = case.value
    if case.kind in EXACT_KINDS:
        return _same(wire, given)
    return _members_within(wire, given)


def _same(wire: Any, given: Any) -> bool:
    """Equal JSON values; a float written where an integer was given stands for that integer read as a
    double (a ``number`` property holds doubles: 2^60 + 1 reads as 2^60), booleans are not numbers."""
    if isinstance(wire, dict) and isinstance(given, dict):
        return wire.keys() == given.keys() and all(_same(wire[k], given[k]) for k in wire)
    if isinstance(wire, list) and isinstance(given, list):
        return len(wire) == len(given) and all(_same(a, b) for a, b in zip(wire, given, strict=True))
    if isinstance(wire, bool) or isinstance(given, bool):
        return wire is given
    if isinstance(wire, float) and isinstance(given, int):
        return wire == float(given)
    return bool(wire == given)


def _first_difference(a: Any, b: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The path of the first place where ``a`` and ``b`` differ (members in sorted order), if any."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                return (*path, key)
            if (found := _first_difference(a[key], b[key], (*path, key))) is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if (found := _first_difference(x, y, (*path, index))) is not None:
                return found
        return None
    return None if a == b else path


def _members_within(inner: Any, outer: Any, *, exact: bool = False) -> bool:
    """Every object member of ``inner`` is in ``outer`` at the same place (lists of equal length
    pairwise); with ``exact``, other values must be equal, else they may differ (a fallback)."""
    if isinstance(inner, dict) and isinstance(outer, dict):
        return all(key in outer and _members_within(item, outer[key], exact=exact) for key, item in inner.items())
    if isinstance(inner, list) and isinstance(outer, list) and len(inner) == len(outer):
        return all(_members_within(a, b, exact=exact) for a, b in zip(inner, outer, strict=True))
    return not exact or inner == outer


def _without(value: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return value
    if len(path) == 1:
        return {k: v for k, v in value.items() if k != path[0]} if isinstance(value, dict) else value
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _without(value[head], rest)}
    if isinstance(value, list) and isinstance(head, int) and head < len(value):
        return [*value[:head], _without(value[head], rest), *value[head + 1 :]]
    return value


def _summary(reading: Reading) -> str:
    if reading.crashed:
        return f"CRASH {reading.detail}"
    if not reading.accepted:
        return f"refused ({reading.detail})"
    return "read " + json.dumps(reading.value, ensure_ascii=False)[:600]


def _has_unsafe_integer(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_unsafe_integer(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_unsafe_integer(item) for item in value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER
