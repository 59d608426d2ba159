"""Which methods every handler of a role must implement: the rule is the IR's
(:mod:`acpgen.ir.required`), since the conformance requirements are derived from it too."""

from __future__ import annotations

from acpgen.ir.required import ROLE_SIDES, Optionality, optional_methods

__all__ = ["ROLE_SIDES", "Optionality", "optional_methods"]
