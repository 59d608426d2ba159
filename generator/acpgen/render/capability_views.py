"""Template data for the capability helpers (``capabilities.py``): every capability of the
tree and every gating rule of the build, with their docstrings and violation messages."""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.render.unstable import UNSTABLE_NOTE


@dataclass(frozen=True, slots=True)
class CapabilityView:
    """One capability as the templates need it."""

    path: str
    side: ir.Owner
    presence: ir.Presence
    attrs: tuple[str, ...]
    accessor: str
    root_class: str
    doc: str


@dataclass(frozen=True, slots=True)
class RuleView:
    """One gating rule as the templates need it."""

    kind: ir.SubjectKind
    subject: str
    path: str
    side: ir.Owner
    classes: tuple[str, ...]
    attr: str | None
    value: str | None
    message: str
    """The plain-words violation message."""


def capability_views(protocol: ir.Protocol) -> tuple[CapabilityView, ...]:
    """Every capability of the tree, in schema order."""
    views = []
    for c in protocol.capabilities:
        meaning = c.description.strip() or "(no description in the schema)"
        judged = "is true" if c.presence == "true" else "is present and not null"
        doc = f"Whether the {c.owner} advertised `{c.path}` (it {judged}).\n\n{meaning}"
        if not c.stable:
            doc = f"{UNSTABLE_NOTE}\n\n{doc}"
        views.append(
            CapabilityView(
                path=c.path,
                side=c.owner,
                presence=c.presence,
                attrs=c.attrs,
                accessor=c.accessor,
                root_class=protocol.type(c.root).class_name,
                doc=doc,
            )
        )
    return tuple(views)


def rule_views(protocol: ir.Protocol) -> tuple[RuleView, ...]:
    """Every gating rule of this build, in table order."""
    return tuple(
        RuleView(
            kind=r.kind,
            subject=r.subject,
            path=r.capability.path,
            side=r.capability.owner,
            classes=r.classes,
            attr=r.attr,
            value=r.value,
            message=f"{_subject_words(r)} needs {r.capability.path}, which the {r.capability.owner} did not advertise",
        )
        for r in protocol.rules
    )


def _subject_words(rule: ir.GatingRule) -> str:
    if rule.kind == "variant":
        union, _, key = rule.subject.partition("[")
        return f"{union} of type {key.rstrip(']')}"
    if rule.kind == "value":
        enum, _, value = rule.subject.partition("=")
        return f"{enum} {value!r}"
    return rule.subject
