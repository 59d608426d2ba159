"""The rules of the spec diff: one per kind of change, each with a stable id.

Rule ids are API (tools filter on them): never rename or reuse one once published; add new
ones instead. A rule fixes the category and the usual level of its findings:

- **level**: ``breaking`` (a message valid in both revisions is rejected by a peer of the other
  revision, or generated code that compiled stops compiling), ``warning`` (something breaks only
  once a peer uses what changed, or behaviour changes silently), ``info`` (nothing breaks).
- **category**: ``wire`` (the JSON changes) or ``source`` (only the generated code changes; the
  JSON is the same).
- **direction**: whose messages stop being accepted: ``old-writer`` (an old writer of the type
  talking to a new reader), ``new-writer`` (a new writer talking to an old reader), ``both``, or
  ``none``.

A finding may carry a lower level than its rule when the reader tolerates the change (an
extensible union, an open enum, an ``x-deserialize-*`` keyword) or when the item is unstable
(unstable items carry no compatibility promise: breaking becomes warning); the finding says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["breaking", "warning", "info"]
Category = Literal["wire", "source"]
Direction = Literal["old-writer", "new-writer", "both", "none"]

LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")
"""Most severe first."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of change."""

    id: str
    level: Level
    category: Category
    direction: Direction
    summary: str
    mirror: str | None = None
    """The rule of the opposite change (added <-> removed, widened <-> narrowed ...)."""
    no_mirror: str = ""
    """Why the rule has no mirror (only for rules without one)."""


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


RULES: dict[str, Rule] = _rules(
    # methods
    Rule(
        id="method-added",
        level="info",
        category="wire",
        direction="none",
        summary="a method was added",
        mirror="method-removed",
    ),
    Rule(
        id="method-removed",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="a method was removed",
        mirror="method-added",
    ),
    Rule(
        id="method-renamed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a method's wire name changed, its params and result did not",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="method-side-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="another side handles the method",
        no_mirror="a change of side is its own inverse",
    ),
    Rule(
        id="method-kind-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a request became a notification or the reverse",
        no_mirror="a change of kind is its own inverse",
    ),
    Rule(
        id="method-params-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a method takes another params type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    Rule(
        id="method-result-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a method answers another result type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    # types
    Rule(
        id="type-added",
        level="info",
        category="source",
        direction="none",
        summary="a type was added",
        mirror="type-removed",
    ),
    Rule(
        id="type-removed",
        level="breaking",
        category="source",
        direction="none",
        summary="a type was removed",
        mirror="type-added",
    ),
    Rule(
        id="type-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="a type was renamed; its shape is the same, so the wire is unchanged",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="type-kind-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a type changed kind (object, union, enum, scalar)",
        no_mirror="a change of kind is its own inverse",
    ),
    Rule(
        id="type-widened",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="a type admits more values",
        mirror="type-narrowed",
    ),
    Rule(
        id="type-narrowed",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="a type admits fewer values",
        mirror="type-widened",
    ),
    Rule(
        id="type-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a type admits other values",
        no_mirror="an incompatible change is its own inverse",
    ),
    # fields
    Rule(
        id="field-added",
        level="info",
        category="wire",
        direction="none",
        summary="an optional field was added",
        mirror="field-removed",
    ),
    Rule(
        id="field-removed",
        level="breaking",
        category="source",
        direction="none",
        summary="an optional field was removed (old writers may still send it; readers ignore it)",
        mirror="field-added",
    ),
    Rule(
        id="required-field-added",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="a required field was added",
        mirror="required-field-removed",
    ),
    Rule(
        id="required-field-removed",
        level="breaking",
        category="wire",
        direction="new-writer",
        summary="a required field was removed",
        mirror="required-field-added",
    ),
    Rule(
        id="field-made-required",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="an optional field became required",
        mirror="field-made-optional",
    ),
    Rule(
        id="field-made-optional",
        level="breaking",
        category="wire",
        direction="new-writer",
        summary="a required field became optional",
        mirror="field-made-required",
    ),
    Rule(
        id="field-renamed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a field was removed and one of the same shape added",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="field-widened",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="a field admits more values",
        mirror="field-narrowed",
    ),
    Rule(
        id="field-narrowed",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="a field admits fewer values",
        mirror="field-widened",
    ),
    Rule(
        id="field-type-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a field admits other values",
        no_mirror="an incompatible change is its own inverse",
    ),
    Rule(
        id="field-type-swapped",
        level="warning",
        category="source",
        direction="none",
        summary="a field refers to another type of the same shape",
        no_mirror="a swap is its own inverse",
    ),
    Rule(
        id="field-default-changed",
        level="warning",
        category="wire",
        direction="old-writer",
        summary="readers fill another default when the field is absent",
        no_mirror="covers adding, removing and changing a default",
    ),
    # union variants
    Rule(
        id="variant-added",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="a union variant was added",
        mirror="variant-removed",
    ),
    Rule(
        id="variant-removed",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="a union variant was removed",
        mirror="variant-added",
    ),
    Rule(
        id="variant-payload-changed",
        level="breaking",
        category="wire",
        direction="both",
        summary="a union variant carries another type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    Rule(
        id="variant-renamed",
        level="info",
        category="source",
        direction="none",
        summary="a union variant of the same wire shape is keyed (titled, or referenced) differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="union-opened",
        level="info",
        category="wire",
        direction="none",
        summary="a union accepts unknown variants",
        mirror="union-closed",
    ),
    Rule(
        id="union-closed",
        level="warning",
        category="wire",
        direction="old-writer",
        summary="a union rejects unknown variants",
        mirror="union-opened",
    ),
    # enum values
    Rule(
        id="enum-value-added",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="an enum value was added",
        mirror="enum-value-removed",
    ),
    Rule(
        id="enum-value-removed",
        level="breaking",
        category="wire",
        direction="old-writer",
        summary="an enum value was removed",
        mirror="enum-value-added",
    ),
    Rule(
        id="enum-opened",
        level="info",
        category="wire",
        direction="none",
        summary="an enum accepts unknown values",
        mirror="enum-closed",
    ),
    Rule(
        id="enum-closed",
        level="warning",
        category="wire",
        direction="old-writer",
        summary="an enum rejects unknown values",
        mirror="enum-opened",
    ),
    # generated names: what code using the bindings imports and calls
    Rule(
        id="class-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the generated class of a type or union variant is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="class-removed",
        level="breaking",
        category="source",
        direction="none",
        summary="a union variant no longer gets a generated class of its own",
        mirror="class-added",
    ),
    Rule(
        id="class-added",
        level="info",
        category="source",
        direction="none",
        summary="a union variant now gets a generated class of its own",
        mirror="class-removed",
    ),
    Rule(
        id="python-method-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the sender and interface method of a wire method is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="builder-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the builder function of a type or union variant is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="state-property-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the SessionState property that session update kinds fold into is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="tracker-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the tracker class of the things session update kinds report is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        id="message-class-renamed",
        level="breaking",
        category="source",
        direction="none",
        summary="the generated class of a branch of the schema's root (a side's messages) is named differently",
        no_mirror="a rename is its own inverse",
    ),
    # stability
    Rule(
        id="stabilised",
        level="info",
        category="source",
        direction="none",
        summary="an unstable item became stable (it enters the stable build)",
        mirror="destabilised",
    ),
    Rule(
        id="destabilised",
        level="breaking",
        category="source",
        direction="none",
        summary="a stable item became unstable (it leaves the stable build)",
        mirror="stabilised",
    ),
    # unstable features, as wholes (``feature:NAME``)
    Rule(
        id="feature-stabilised",
        level="info",
        category="source",
        direction="none",
        summary="every item of an unstable feature that remains became stable (the feature is gone)",
        mirror="feature-destabilised",
    ),
    Rule(
        id="feature-destabilised",
        level="warning",
        category="source",
        direction="none",
        summary="a new unstable feature holds items that were stable (each is reported destabilised)",
        mirror="feature-stabilised",
    ),
    Rule(
        id="feature-added",
        level="info",
        category="source",
        direction="none",
        summary="an unstable feature was added to the manifest",
        mirror="feature-removed",
    ),
    Rule(
        id="feature-removed",
        level="warning",
        category="source",
        direction="none",
        summary="an unstable feature left the manifest without becoming stable (builds selecting it fail)",
        mirror="feature-added",
    ),
    # lenient reading
    Rule(
        id="leniency-added",
        level="info",
        category="wire",
        direction="none",
        summary="readers tolerate more (an x-deserialize-* keyword was added)",
        mirror="leniency-removed",
    ),
    Rule(
        id="leniency-removed",
        level="warning",
        category="wire",
        direction="old-writer",
        summary="readers tolerate less (an x-deserialize-* keyword was removed)",
        mirror="leniency-added",
    ),
    # capability rule table
    Rule(
        id="capability-rule-added",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="a subject is now gated by a capability (new senders refuse it unless the peer advertised it)",
        mirror="capability-rule-removed",
    ),
    Rule(
        id="capability-rule-removed",
        level="info",
        category="wire",
        direction="none",
        summary="a subject is no longer gated by a capability",
        mirror="capability-rule-added",
    ),
    Rule(
        id="capability-rule-changed",
        level="warning",
        category="wire",
        direction="new-writer",
        summary="a subject is gated by another capability, side or presence test",
        no_mirror="a change of rule is its own inverse",
    ),
)


def rule(rule_id: str) -> Rule:
    """The rule with id ``rule_id`` (a KeyError names a programming error, not bad input)."""
    return RULES[rule_id]
