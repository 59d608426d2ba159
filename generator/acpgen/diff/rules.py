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
    Rule("method-added", "info", "wire", "none", "a method was added", mirror="method-removed"),
    Rule("method-removed", "breaking", "wire", "old-writer", "a method was removed", mirror="method-added"),
    Rule(
        "method-renamed",
        "breaking",
        "wire",
        "both",
        "a method's wire name changed, its params and result did not",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        "method-side-changed",
        "breaking",
        "wire",
        "both",
        "another side handles the method",
        no_mirror="a change of side is its own inverse",
    ),
    Rule(
        "method-kind-changed",
        "breaking",
        "wire",
        "both",
        "a request became a notification or the reverse",
        no_mirror="a change of kind is its own inverse",
    ),
    Rule(
        "method-params-changed",
        "breaking",
        "wire",
        "both",
        "a method takes another params type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    Rule(
        "method-result-changed",
        "breaking",
        "wire",
        "both",
        "a method answers another result type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    # types
    Rule("type-added", "info", "source", "none", "a type was added", mirror="type-removed"),
    Rule("type-removed", "breaking", "source", "none", "a type was removed", mirror="type-added"),
    Rule(
        "type-renamed",
        "breaking",
        "source",
        "none",
        "a type was renamed; its shape is the same, so the wire is unchanged",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        "type-kind-changed",
        "breaking",
        "wire",
        "both",
        "a type changed kind (object, union, enum, scalar)",
        no_mirror="a change of kind is its own inverse",
    ),
    Rule("type-widened", "warning", "wire", "new-writer", "a type admits more values", mirror="type-narrowed"),
    Rule("type-narrowed", "breaking", "wire", "old-writer", "a type admits fewer values", mirror="type-widened"),
    Rule(
        "type-changed",
        "breaking",
        "wire",
        "both",
        "a type admits other values",
        no_mirror="an incompatible change is its own inverse",
    ),
    # fields
    Rule("field-added", "info", "wire", "none", "an optional field was added", mirror="field-removed"),
    Rule(
        "field-removed",
        "breaking",
        "source",
        "none",
        "an optional field was removed (old writers may still send it; readers ignore it)",
        mirror="field-added",
    ),
    Rule(
        "required-field-added",
        "breaking",
        "wire",
        "old-writer",
        "a required field was added",
        mirror="required-field-removed",
    ),
    Rule(
        "required-field-removed",
        "breaking",
        "wire",
        "new-writer",
        "a required field was removed",
        mirror="required-field-added",
    ),
    Rule(
        "field-made-required",
        "breaking",
        "wire",
        "old-writer",
        "an optional field became required",
        mirror="field-made-optional",
    ),
    Rule(
        "field-made-optional",
        "breaking",
        "wire",
        "new-writer",
        "a required field became optional",
        mirror="field-made-required",
    ),
    Rule(
        "field-renamed",
        "breaking",
        "wire",
        "both",
        "a field was removed and one of the same shape added",
        no_mirror="a rename is its own inverse",
    ),
    Rule("field-widened", "warning", "wire", "new-writer", "a field admits more values", mirror="field-narrowed"),
    Rule("field-narrowed", "breaking", "wire", "old-writer", "a field admits fewer values", mirror="field-widened"),
    Rule(
        "field-type-changed",
        "breaking",
        "wire",
        "both",
        "a field admits other values",
        no_mirror="an incompatible change is its own inverse",
    ),
    Rule(
        "field-type-swapped",
        "warning",
        "source",
        "none",
        "a field refers to another type of the same shape",
        no_mirror="a swap is its own inverse",
    ),
    Rule(
        "field-default-changed",
        "warning",
        "wire",
        "old-writer",
        "readers fill another default when the field is absent",
        no_mirror="covers adding, removing and changing a default",
    ),
    # union variants
    Rule("variant-added", "warning", "wire", "new-writer", "a union variant was added", mirror="variant-removed"),
    Rule("variant-removed", "breaking", "wire", "old-writer", "a union variant was removed", mirror="variant-added"),
    Rule(
        "variant-payload-changed",
        "breaking",
        "wire",
        "both",
        "a union variant carries another type of a different shape",
        no_mirror="a change of type is its own inverse",
    ),
    Rule(
        "variant-renamed",
        "info",
        "source",
        "none",
        "a union variant of the same wire shape is keyed (titled, or referenced) differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule("union-opened", "info", "wire", "none", "a union accepts unknown variants", mirror="union-closed"),
    Rule("union-closed", "warning", "wire", "old-writer", "a union rejects unknown variants", mirror="union-opened"),
    # enum values
    Rule("enum-value-added", "warning", "wire", "new-writer", "an enum value was added", mirror="enum-value-removed"),
    Rule(
        "enum-value-removed", "breaking", "wire", "old-writer", "an enum value was removed", mirror="enum-value-added"
    ),
    Rule("enum-opened", "info", "wire", "none", "an enum accepts unknown values", mirror="enum-closed"),
    Rule("enum-closed", "warning", "wire", "old-writer", "an enum rejects unknown values", mirror="enum-opened"),
    # generated names: what code using the bindings imports and calls
    Rule(
        "class-renamed",
        "breaking",
        "source",
        "none",
        "the generated class of a type or union variant is named differently",
        no_mirror="a rename is its own inverse",
    ),
    Rule(
        "class-removed",
        "breaking",
        "source",
        "none",
        "a union variant no longer gets a generated class of its own",
        mirror="class-added",
    ),
    Rule(
        "class-added",
        "info",
        "source",
        "none",
        "a union variant now gets a generated class of its own",
        mirror="class-removed",
    ),
    Rule(
        "python-method-renamed",
        "breaking",
        "source",
        "none",
        "the sender and interface method of a wire method is named differently",
        no_mirror="a rename is its own inverse",
    ),
    # stability
    Rule(
        "stabilised",
        "info",
        "source",
        "none",
        "an unstable item became stable (it enters the stable build)",
        mirror="destabilised",
    ),
    Rule(
        "destabilised",
        "breaking",
        "source",
        "none",
        "a stable item became unstable (it leaves the stable build)",
        mirror="stabilised",
    ),
    # lenient reading
    Rule(
        "leniency-added",
        "info",
        "wire",
        "none",
        "readers tolerate more (an x-deserialize-* keyword was added)",
        mirror="leniency-removed",
    ),
    Rule(
        "leniency-removed",
        "warning",
        "wire",
        "old-writer",
        "readers tolerate less (an x-deserialize-* keyword was removed)",
        mirror="leniency-added",
    ),
    # capability rule table
    Rule(
        "capability-rule-added",
        "warning",
        "wire",
        "new-writer",
        "a subject is now gated by a capability (new senders refuse it unless the peer advertised it)",
        mirror="capability-rule-removed",
    ),
    Rule(
        "capability-rule-removed",
        "info",
        "wire",
        "none",
        "a subject is no longer gated by a capability",
        mirror="capability-rule-added",
    ),
    Rule(
        "capability-rule-changed",
        "warning",
        "wire",
        "new-writer",
        "a subject is gated by another capability, side or presence test",
        no_mirror="a change of rule is its own inverse",
    ),
)


def rule(rule_id: str) -> Rule:
    """The rule with id ``rule_id`` (a KeyError names a programming error, not bad input)."""
    return RULES[rule_id]
