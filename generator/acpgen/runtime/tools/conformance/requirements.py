"""Requirements, what a run found of each, and the verdict.

The tiers are those of acp-tck: MANDATORY (a FAIL or a NOT_TESTED makes the run not
conformant), CAPABILITY (applies only where ``applies_when`` held; then a FAIL
counts), ADVISORY and INFORMATIONAL (reported, never change the verdict). A finding
is PASS, FAIL or SKIPPED (exercised, but not applicable or not observable); a
requirement is the worst of its findings (FAIL, then PASS, then SKIPPED), NOT_TESTED
when none was recorded, with the reason the run gives (blocked, deselected).

:class:`Requirement` is the one type of a requirement: the generator builds them
(from the schema's tables and the curated table) and a package's ``conformance``
module lists them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Tier = Literal["MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL"]
Judged = Literal["agent", "client", "both"]
Status = Literal["PASS", "FAIL", "SKIPPED", "NOT_TESTED"]
Found = Literal["PASS", "FAIL", "SKIPPED"]
TIERS: tuple[Tier, ...] = ("MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL")
STATUSES: tuple[Status, ...] = ("PASS", "FAIL", "SKIPPED", "NOT_TESTED")
_RANK = {"FAIL": 3, "PASS": 2, "SKIPPED": 1, "NOT_TESTED": 0}


@dataclass(frozen=True, slots=True)
class Citation:
    """Where the spec states a requirement."""

    page: str
    section: str
    url: str


@dataclass(frozen=True, slots=True)
class Requirement:
    """One conformance requirement of a build."""

    id: str
    tier: Tier
    side: Judged
    """The side it judges (``both``: whichever side is under test)."""
    what: str
    citation: Citation
    source: str
    """``derived:<family>`` or ``curated``."""
    checks: tuple[str, ...] = ()
    """The registered checks of the build that judge it (:mod:`.registry`); none: the
    kit does not judge it, and says so."""
    applies_when: tuple[str, ...] = ()
    """Capability paths (all must hold) or ``inferred:<identifier type>``."""
    subject: str = ""
    """What a derived requirement is about: a method, a rule's subject, a type."""
    acp_tck: str = ""
    """The acp-tck requirement it corresponds to, if any."""

    @property
    def family(self) -> str:
        """The derived family (``capability-gate``), or ``curated``."""
        return self.source.removeprefix("derived:")


@dataclass(frozen=True, slots=True)
class Finding:
    """What one check found of one requirement, in one scenario."""

    requirement: str
    status: Found
    message: str
    scenario: str


@dataclass(slots=True)
class Outcome:
    """A requirement's status over the run, with its findings."""

    requirement: Requirement
    status: Status = "NOT_TESTED"
    findings: list[Finding] = field(default_factory=list)
    why_not_tested: str = ""
    """Why no finding was recorded (blocked by a failed step, deselected)."""

    def message(self) -> str:
        """The message of the finding that decided the status (or why not tested)."""
        if self.status == "NOT_TESTED":
            return self.why_not_tested
        found = self.deciding()
        return found.message if found is not None else ""

    def deciding(self) -> Finding | None:
        """The finding that decided the status (the first with a message)."""
        mine = [f for f in self.findings if f.status == self.status]
        return next((f for f in mine if f.message), mine[0] if mine else None)


class UnknownRequirement(LookupError):
    """A finding names a requirement the build does not hold: a defect of the kit."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether the run found the peer conformant, and why not."""

    conformant: bool
    mandatory_failures: int
    mandatory_not_tested: int
    capability_failures: int
    counts: Mapping[str, Mapping[str, int]]
    unfinished: str = ""
    """Why the run could not finish (a client that never left): not conformant."""
    blocked: str = ""
    """What blocked the run (an unreadable or refused ``initialize``)."""

    def line(self) -> str:
        """``VERDICT: CONFORMANT`` or ``VERDICT: NOT CONFORMANT (...)``."""
        if self.conformant:
            return "VERDICT: CONFORMANT"
        why = []
        if self.mandatory_failures:
            why.append(f"{self.mandatory_failures} mandatory failures")
        if self.mandatory_not_tested:
            why.append(f"{self.mandatory_not_tested} mandatory not tested")
        if self.capability_failures:
            why.append(f"{self.capability_failures} capability failures")
        if self.blocked:
            said = (
                self.blocked if len(self.blocked) <= 80 else self.blocked[:77] + "..."
            )
            why.append(f"blocked: {said}")
        if self.unfinished:
            why.append(self.unfinished)
        return f"VERDICT: NOT CONFORMANT ({', '.join(why)})"


def outcomes(
    requirements: Iterable[Requirement],
    findings: Iterable[Finding],
    why_not_tested: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Each requirement's outcome: the worst of its findings. A finding of a
    requirement not listed raises :class:`UnknownRequirement` (nothing is dropped
    silently)."""
    found = {r.id: Outcome(r) for r in requirements}
    for finding in findings:
        outcome = found.get(finding.requirement)
        if outcome is None:
            raise UnknownRequirement(
                f"a finding of {finding.requirement!r} (scenario "
                f"{finding.scenario!r}), which is not judged in this run"
            )
        outcome.findings.append(finding)
        if _RANK[finding.status] > _RANK[outcome.status]:
            outcome.status = finding.status
    for outcome in found.values():
        if outcome.status == "NOT_TESTED":
            outcome.why_not_tested = (why_not_tested or {}).get(
                outcome.requirement.id, "no scenario of this run reached it"
            )
    return list(found.values())


def verdict(
    results: Iterable[Outcome], *, unfinished: str = "", blocked: str = ""
) -> Verdict:
    """The run's verdict from its outcomes."""
    counts: dict[str, dict[str, int]] = {t: dict.fromkeys(STATUSES, 0) for t in TIERS}
    failures = not_tested = capability = 0
    for o in results:
        counts[o.requirement.tier][o.status] += 1
        if o.requirement.tier == "MANDATORY":
            failures += o.status == "FAIL"
            not_tested += o.status == "NOT_TESTED"
        elif o.requirement.tier == "CAPABILITY":
            capability += o.status == "FAIL"
    ok = not (failures or not_tested or capability or unfinished or blocked)
    return Verdict(ok, failures, not_tested, capability, counts, unfinished, blocked)
