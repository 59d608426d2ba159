"""The whole job for one schema revision: load, build the IR, render each variant."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acpgen import ir
from acpgen.build import build_protocol
from acpgen.capabilities import RULES_FILE, attach_rules, capability_tree
from acpgen.feature_check import resolve_manifest
from acpgen.feature_manifest import MANIFEST_FILE
from acpgen.features import Manifest
from acpgen.load import check_schema, load_schema
from acpgen.stability import strip_unstable, unstable_by_comparison, unstable_by_marker

VARIANTS: tuple[ir.Variant, ...] = ("stable", "unstable")


@dataclass(frozen=True, slots=True)
class SchemaFile:
    """A loaded schema document and where it came from."""

    doc: dict[str, Any]
    source: ir.Source


@dataclass(frozen=True, slots=True)
class Revision:
    """One schema revision: a stable file and, from v0.7.0 on, an unstable one."""

    stable: SchemaFile
    unstable: SchemaFile | None
    protocol_version: int
    rules: Mapping[str, Any] | None = None
    """The capability rule table (``schema/capability-rules.json``), if the revision has one."""
    rules_origin: str = RULES_FILE
    strict_capabilities: bool = False
    """Fail when a leaf capability is neither gated by a rule nor listed as informational."""
    features: Mapping[str, Any] | None = None
    """The unstable feature manifest (``schema/unstable-features.json``), if the revision has one."""
    features_origin: str = MANIFEST_FILE

    def unstable_items(self) -> frozenset[str]:
        """Keys of the items that are not stable (compared, or from the description marker)."""
        if self.unstable is None:
            return unstable_by_marker(self.stable.doc["$defs"])
        return unstable_by_comparison(self.stable.doc["$defs"], self.unstable.doc["$defs"])

    def protocol(self, variant: ir.Variant) -> tuple[ir.Protocol, dict[str, Any]]:
        """The IR of one variant and the schema document it was built from."""
        marks = self.unstable_items()
        if self.unstable is None:
            chosen = self.stable
            doc = strip_unstable(chosen.doc, marks) if variant == "stable" else chosen.doc
            check_schema(doc, f"{chosen.source.file} (stable part)")
        else:
            chosen = self.stable if variant == "stable" else self.unstable
            doc = chosen.doc
        protocol = build_protocol(
            doc, variant=variant, source=chosen.source, protocol_version=self.protocol_version, unstable_items=marks
        )
        widest = (self.unstable or self.stable).doc
        all_paths = frozenset(c.path for c in capability_tree(widest["$defs"], marks))
        protocol = attach_rules(
            protocol, doc, self.rules, marks, all_paths, origin=self.rules_origin, strict=self.strict_capabilities
        )
        self.manifest()  # every generation checks the feature manifest, whichever the build
        return protocol, doc

    def manifest(self) -> Manifest | None:
        """The feature manifest checked against the widest schema of the revision, if it has one."""
        if self.features is None:
            return None
        widest = self.unstable or self.stable
        return resolve_manifest(
            self.features,
            widest.doc,
            self.unstable_items(),
            origin=self.features_origin,
            schema_file=widest.source.file,
        )


def read_schema_file(path: Path, *, package: str, version: str, name: str | None = None) -> SchemaFile:
    """Load and check one schema file, recording its sha256."""
    doc = load_schema(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return SchemaFile(doc=doc, source=ir.Source(package=package, version=version, file=name or path.name, sha256=sha))


def render_variant(revision: Revision, variant: ir.Variant, package: str) -> dict[str, str]:
    """Every file of the generated package of one variant."""
    from acpgen.render import render  # datamodel-code-generator: imported only to render

    protocol, doc = revision.protocol(variant)
    return render(protocol, doc, package)
