"""The pydantic versions a generated package runs on: stated here once, and from here in its import
guard; README.md and docs/vendoring.md say the same (tests/system/test_pydantic_floor.py checks them, and
runs a vendored copy on the floor itself and on the first release of each later minor)."""

from __future__ import annotations

PYDANTIC_MINIMUM = (2, 12)
"""The oldest pydantic the generated code runs on. 2.11 lacks what the models need: ``Field(exclude_if=...)``
(a non-nullable optional property set to None would be written as ``null``) and the discriminated
unions inside the strict JSON annotation (read as plain unions, every branch tried)."""

PYDANTIC_REFUSED = {
    "2.13.0": "reads a JSON message's params without its method, so as the wrong method's (fixed in 2.13.1)",
}
"""Releases above the floor that the package refuses at import, each with why."""


def requirement() -> str:
    """The requirement to declare beside a vendored copy (``pydantic>=2.12,!=2.13.0``)."""
    floor = "pydantic>=" + ".".join(map(str, PYDANTIC_MINIMUM))
    return ",".join([floor, *(f"!={version}" for version in sorted(PYDANTIC_REFUSED))])


def stated() -> str:
    """The floor in prose, as README, the docs and the import error say it
    (``pydantic >= 2.12, but not 2.13.0``)."""
    floor = "pydantic >= " + ".".join(map(str, PYDANTIC_MINIMUM))
    refused = sorted(PYDANTIC_REFUSED)
    return f"{floor}, but not {' or '.join(refused)}" if refused else floor
