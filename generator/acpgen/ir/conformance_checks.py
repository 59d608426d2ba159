"""The conformance kit's registry as the generator reads it: the kit's modules
(``acpgen.runtime.tools.conformance``), the checks each declares (``CHECKS``), the methods
a build needs to hold it (``METHODS``), and its agent scenarios (``SCENARIOS``) and probe
steps (``STEPS``) in the order they run (``ORDER``).

A build holds a module only when it has every method the module names, so that a
package's kit never names a method of another protocol version (a v2 build carries no
``session/load`` scenario); the registry of a build is the checks of its modules."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache

from acpgen.errors import AcpgenError, Problem
from acpgen.runtime.tools.conformance.registry import CheckSpec

KIT = "acpgen.runtime.tools.conformance"


@dataclass(frozen=True, slots=True)
class KitModule:
    """One module of the kit."""

    name: str
    """Its name inside the kit (``agent_load``)."""
    methods: tuple[str, ...]
    """The methods a build must have to hold it (wire names)."""
    checks: tuple[CheckSpec, ...]
    scenarios: bool
    """It lists agent scenarios (``SCENARIOS``)."""
    steps: bool
    """It lists probe agent steps (``STEPS``)."""
    order: int

    @property
    def file(self) -> str:
        """Its runtime file, relative to the runtime's folder."""
        return f"tools/conformance/{self.name}.py"


@cache
def kit_modules() -> tuple[KitModule, ...]:
    """Every module of the kit, in run order then name."""
    package = importlib.import_module(KIT)
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{KIT}.{info.name}")
        found.append(
            KitModule(
                name=info.name,
                methods=tuple(getattr(module, "METHODS", ())),
                checks=tuple(getattr(module, "CHECKS", ())),
                scenarios=hasattr(module, "SCENARIOS"),
                steps=hasattr(module, "STEPS"),
                order=int(getattr(module, "ORDER", 0)),
            )
        )
    return tuple(sorted(found, key=lambda m: (m.order, m.name)))


@cache
def all_checks() -> dict[str, CheckSpec]:
    """Every registered check of the kit, by name (one name is one check)."""
    found: dict[str, CheckSpec] = {}
    for module in kit_modules():
        for check in module.checks:
            if check.name in found:
                raise AcpgenError(
                    Problem(
                        what=f"two checks of the conformance kit are named {check.name!r}",
                        where=f"{KIT}.{module.name}",
                        hint="Give each check a name of its own.",
                    )
                )
            found[check.name] = check
    return found


def held(methods: frozenset[str]) -> tuple[KitModule, ...]:
    """The modules a build with ``methods`` (wire names) holds."""
    return tuple(m for m in kit_modules() if set(m.methods) <= methods)


def build_checks(methods: frozenset[str]) -> dict[str, CheckSpec]:
    """The checks of a build with ``methods``, by name."""
    return {c.name: c for m in held(methods) for c in m.checks}
