"""The one registry of what the kit judges.

Every check declares the requirements it judges: curated ids (``judges``), whole
derived families (``families``: every subject of them), and the derived requirements
of single subjects (``handlers``: a method's required-handler requirement;
``honors``: a capability rule's honor requirement). A module of the kit that holds
checks lists them in ``CHECKS`` and, when it calls methods a build may lack, names
them in ``METHODS``: a build holds the module, and its checks, only when it has those
methods.

The generator reads the registry (``acpgen.ir.conformance_checks``): a curated
requirement's ``check`` must name registered checks that declare it, each requirement
of a build lists the checks of the build that judge it (:attr:`.Requirement.checks`),
and the docs and ``-k`` follow from that. At run time a finding may only be recorded
by a scenario whose checks judge its requirement (:meth:`Registry.allow`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Mode = Literal["agent", "client", "trace"]
MODES: tuple[Mode, ...] = ("agent", "client", "trace")


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """One check: what it judges, in which modes."""

    name: str
    """``agent.cancel``: the name the curated table's ``check`` uses."""
    modes: tuple[Mode, ...]
    judges: tuple[str, ...] = ()
    """Curated requirement ids."""
    families: tuple[str, ...] = ()
    """Derived families it judges for every subject (``message-params``)."""
    handlers: tuple[str, ...] = ()
    """Methods whose ``required-handler`` requirement it judges."""
    honors: tuple[str, ...] = ()
    """Rule subjects whose ``capability-honor`` requirement it judges."""

    def covers(self, family: str, subject: str) -> bool:
        """Whether it judges the derived requirement of ``family`` about ``subject``."""
        return (
            family in self.families
            or (family == "required-handler" and subject in self.handlers)
            or (family == "capability-honor" and subject in self.honors)
        )


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    """An agent scenario: its name (``-k`` selects by it), its checks, what it runs."""

    name: str
    checks: tuple[str, ...]
    run: Callable[[Any], None]
    needs: tuple[str, ...] = ()
    """Methods it needs answered: once one of them went unanswered, it is blocked."""


class UndeclaredFinding(LookupError):
    """A scenario recorded a requirement none of its checks declares: a kit defect."""


class Registry:
    """The checks of a build, and which requirement each judges."""

    def __init__(
        self, checks: Iterable[CheckSpec], requirements: Iterable[Any]
    ) -> None:
        self.checks = {c.name: c for c in checks}
        self.requirements = {r.id: r for r in requirements}

    def judged(self, mode: Mode, sides: Sequence[str]) -> list[Any]:
        """The requirements of ``sides`` some check judges in ``mode``, in table
        order."""
        return [
            r
            for r in self.requirements.values()
            if r.side in sides and self._in_mode(r, mode)
        ]

    def unjudged(self, sides: Sequence[str]) -> list[Any]:
        """The requirements of ``sides`` no check of the build judges, in any mode."""
        return [
            r for r in self.requirements.values() if r.side in sides and not r.checks
        ]

    def _in_mode(self, requirement: Any, mode: Mode) -> bool:
        return any(
            mode in self.checks[name].modes
            for name in requirement.checks
            if name in self.checks
        )

    def ids_of(self, checks: Iterable[str]) -> set[str]:
        """The ids the checks named judge in this build."""
        names = set(checks)
        return {
            r.id for r in self.requirements.values() if names.intersection(r.checks)
        }

    def allow(self, rid: str, active: Iterable[str], scenario: str) -> bool:
        """Whether a finding of ``rid`` may be recorded by ``active`` checks: True
        when it is theirs, False when they declare it but this build lacks it (a
        curated requirement about an item the build leaves out); anything else raises
        :class:`UndeclaredFinding`."""
        names = set(active)
        requirement = self.requirements.get(rid)
        if requirement is None:
            if any(rid in self.checks[n].judges for n in names if n in self.checks):
                return False
            raise UndeclaredFinding(
                f"scenario {scenario!r} recorded {rid!r}: no requirement of this build"
            )
        if names.intersection(requirement.checks):
            return True
        raise UndeclaredFinding(
            f"scenario {scenario!r} (checks {sorted(names)}) recorded {rid!r}, which "
            f"is judged by {list(requirement.checks) or 'no check'}"
        )

    def selects(self, scenario: ScenarioSpec, words: Sequence[str]) -> bool:
        """Whether ``-k`` words select the scenario: by its name, or by an id its
        checks judge."""
        if not words:
            return True
        ids = self.ids_of(scenario.checks)
        return any(
            word.lower() in scenario.name or any(word.upper() in rid for rid in ids)
            for word in words
        )
