"""Check the unstable feature manifest against the schema: run at every generation.

Against the widest schema of a revision (``schema.unstable.json``) and its unstable item keys
(:meth:`acpgen.pipeline.Revision.unstable_items`, the IR's ``unstable_items``):

- every item and capability a feature names exists and is unstable; a field, variant or value
  of an unstable type is not named on its own (its type key owns it), nor is the property of a
  capability (the capability path owns it);
- every unstable item belongs to exactly one feature, and every unstable capability is listed by
  exactly one: a schema update that adds one fails here, naming it and its place in the schema;
- every feature owns something (one whose items were all stabilised is to be removed);
- dependencies: see :mod:`acpgen.features.dependencies`.

Every problem is reported, each with its place (the manifest entry, or the item in the schema).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.features.dependencies import dependency_problems
from acpgen.features.items import by_owner, capability_field, covered_by_type, item_pointer, kind_of
from acpgen.features.model import Feature, Manifest
from acpgen.load.capabilities import CapabilityProperty, capability_properties
from acpgen.load.inventory import Node, item_map, item_owner

_KEYS = "type:X, field:X.wireName, variant:X[tag], value:X=value, method:side:wire"


@dataclass(frozen=True, slots=True)
class FeatureSchema:
    """What the checks read of the schema."""

    defs: Mapping[str, Node]
    items: Mapping[str, Node]
    """Every item of the schema by key, with its node."""
    unstable: frozenset[str]
    capabilities: Mapping[str, CapabilityProperty]
    """Every capability by path."""
    capability_fields: Mapping[str, str]
    """The key of the property that holds each capability, by path."""
    file: str
    """The schema file, for messages."""
    owned: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    """The unstable items by the type that holds them (:func:`by_owner`)."""

    def where(self, key: str) -> str:
        """An item's place: the schema file and the item's JSON pointer."""
        return f"{self.file}#{item_pointer(self.defs, self.items, key)}"


@dataclass(frozen=True, slots=True)
class _Claim:
    """A manifest entry that makes a feature own an item."""

    feature: str
    label: str
    """The entry: an item key, or ``capability <path>``."""
    where: str


def feature_schema(doc: Mapping[str, Any], unstable: frozenset[str], file: str) -> FeatureSchema:
    """The parts of a schema document that the checks read."""
    defs: Mapping[str, Node] = doc["$defs"]
    capabilities = {c.path: c for c in capability_properties(defs, unstable)}
    fields = {p: f for p, c in capabilities.items() if (f := capability_field(defs, c)) is not None}
    return FeatureSchema(defs, item_map(defs), unstable, capabilities, fields, file, by_owner(unstable))


def resolve_manifest(
    table: Mapping[str, Any],
    doc: Mapping[str, Any],
    unstable: frozenset[str],
    *,
    origin: str,
    schema_file: str,
    strict: bool = True,
) -> Manifest:
    """The manifest ``table`` (shape already checked), checked against ``doc`` and its unstable items.

    Not ``strict``, nothing is refused: each feature owns what of its entries the schema holds,
    and an unstable item no entry claims has no feature (``acpgen diff`` reads a schema bump
    whose manifest is not updated yet so).
    """
    schema = feature_schema(doc, unstable, schema_file)
    problems: list[Problem] = []
    claims: dict[str, list[_Claim]] = {}
    features = []
    for name in sorted(table["features"]):
        raw = table["features"][name]
        owned = _claim_items(name, raw, schema, origin, claims, problems)
        owned |= _claim_capabilities(name, raw, schema, origin, claims, problems)
        features.append(
            Feature(
                name=name,
                description=raw["description"],
                link=raw.get("link"),
                dependencies=tuple(raw.get("dependencies", ())),
                items=tuple(raw.get("items", ())),
                capabilities=tuple(raw.get("capabilities", ())),
                owns=frozenset(owned),
                rationale=raw.get("rationale"),
            )
        )
    manifest = Manifest(tuple(features), origin)
    problems += _empty(manifest)
    problems += _overlaps(claims)
    problems += _unassigned(claims, schema, origin)
    problems += _unlisted_capabilities(manifest, claims, schema)
    problems += dependency_problems(manifest, schema.defs, schema.items)
    if problems and strict:
        raise AcpgenError(*problems)
    return manifest


def _claim_items(
    name: str,
    raw: Mapping[str, Any],
    schema: FeatureSchema,
    origin: str,
    claims: dict[str, list[_Claim]],
    problems: list[Problem],
) -> set[str]:
    owned: set[str] = set()
    for index, key in enumerate(raw.get("items", ())):
        where = f"{origin}#{pointer('features', name, 'items', index)}"
        found = _item_problem(name, key, schema)
        if found is not None:
            problems.append(Problem(found[0], where, found[1]))
            continue
        covered = covered_by_type(key, schema.owned) if kind_of(key) == "type" else frozenset({key})
        for item in covered:
            claims.setdefault(item, []).append(_Claim(name, key, where))
        owned |= covered
    return owned


def _item_problem(name: str, key: str, schema: FeatureSchema) -> tuple[str, str] | None:
    """What is wrong with a listed item key (and what to do), if anything."""
    holds = sorted(p for p, f in schema.capability_fields.items() if f == key)
    container = f"type:{item_owner(key)}"
    if key not in schema.items:
        return (
            f"feature {name} names {key}, which the unstable schema does not have",
            f"Correct the key ({_KEYS}) or remove it: upstream may have renamed or removed it.",
        )
    if key not in schema.unstable:
        return (
            f"feature {name} names {key}, which is stable",
            "Stable items belong to no feature: remove it (if upstream stabilised it, delete the feature too "
            "once it owns nothing).",
        )
    if kind_of(key) in ("field", "variant", "value") and container in schema.unstable:
        return (
            f"feature {name} names {key}, which is part of the unstable {container}",
            f"A type key owns the type with everything in it: remove {key} and list {container} in one feature.",
        )
    if holds:
        return (
            f"feature {name} names {key}, which holds the capability {holds[0]}",
            f'List "{holds[0]}" under `capabilities` instead of {key} under `items`.',
        )
    return None


def _claim_capabilities(
    name: str,
    raw: Mapping[str, Any],
    schema: FeatureSchema,
    origin: str,
    claims: dict[str, list[_Claim]],
    problems: list[Problem],
) -> set[str]:
    owned: set[str] = set()
    for index, path in enumerate(raw.get("capabilities", ())):
        where = f"{origin}#{pointer('features', name, 'capabilities', index)}"
        capability, field = schema.capabilities.get(path), schema.capability_fields.get(path)
        if capability is None or field is None:
            problems.append(
                Problem(
                    f"feature {name} names the capability {path}, which the schema does not have",
                    where,
                    "Correct the path (wire names from agentCapabilities or clientCapabilities, as in "
                    "capability-rules.json) or remove it.",
                )
            )
        elif capability.stable:
            problems.append(
                Problem(
                    f"feature {name} names the capability {path}, which is stable",
                    where,
                    "Stable capabilities belong to no feature: remove it (if upstream stabilised it, delete the "
                    "feature too once it owns nothing).",
                )
            )
        else:
            claims.setdefault(field, []).append(_Claim(name, f"capability {path}", where))
            owned.add(field)
    return owned


def _empty(manifest: Manifest) -> list[Problem]:
    return [
        Problem(
            f"feature {f.name} owns no unstable item",
            f"{manifest.origin}#{pointer('features', f.name)}",
            "List its items and capabilities; if upstream stabilised or removed them all, delete the feature.",
        )
        for f in manifest.features
        if not f.owns
    ]


def _overlaps(claims: Mapping[str, list[_Claim]]) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple[str, ...]] = set()
    for key in sorted(claims):
        by_feature: dict[str, _Claim] = {}
        for claim in claims[key]:
            by_feature.setdefault(claim.feature, claim)
        if len(by_feature) < 2:
            continue
        first, second = (by_feature[n] for n in sorted(by_feature)[:2])
        pair = (first.feature, first.label, second.feature, second.label)
        if pair in seen:
            continue
        seen.add(pair)
        same = first.label == second.label
        problems.append(
            Problem(
                f"{first.label} is in two features: {first.feature} and {second.feature}"
                if same
                else f"{key} belongs to two features: {first.feature} ({first.label}) and {second.feature} "
                f"({second.label})",
                second.where,
                "An unstable item belongs to exactly one feature: keep it in the feature that introduced it and "
                "remove it from the other (a type key owns the type's fields, variants and values).",
            )
        )
    return problems


def _unassigned(claims: Mapping[str, list[_Claim]], schema: FeatureSchema, origin: str) -> list[Problem]:
    missing = schema.unstable - claims.keys()
    problems = []
    for key in sorted(missing):
        if kind_of(key) not in ("type", "method") and f"type:{item_owner(key)}" in missing:
            continue  # reported with its type, whose key owns it
        paths = sorted(p for p, f in schema.capability_fields.items() if f == key)
        entry = f'the capability "{paths[0]}" to the `capabilities`' if paths else f'"{key}" to the `items`'
        problems.append(
            Problem(
                f"unstable item {key} belongs to no feature",
                schema.where(key),
                f"Every unstable item belongs to one feature (a schema update may have added this one): add {entry} "
                f"of the feature that introduced it in {origin}, or of a new feature named after the Rust crate's "
                "cargo feature without `unstable_`; list the features whose types it refers to under that feature's "
                "`dependencies`.",
            )
        )
    return problems


def _unlisted_capabilities(
    manifest: Manifest, claims: Mapping[str, list[_Claim]], schema: FeatureSchema
) -> list[Problem]:
    listed = {p for f in manifest.features for p in f.capabilities}
    problems = []
    for path, capability in sorted(schema.capabilities.items()):
        field = schema.capability_fields.get(path)
        if capability.stable or path in listed or field is None or field not in claims:
            continue  # an unowned property is reported as an item without a feature
        owner = claims[field][0]
        problems.append(
            Problem(
                f"unstable capability {path} is listed by no feature",
                schema.where(field),
                f'Add "{path}" to the `capabilities` of feature {owner.feature} in {manifest.origin} '
                f"(it owns {field} through {owner.label}).",
            )
        )
    return problems
