"""The whole job for one schema revision: load, build the IR, render each variant."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Problem
from acpgen.features.check import resolve_manifest
from acpgen.features.manifest import MANIFEST_FILE
from acpgen.features.model import Manifest
from acpgen.features.selection import Selection, select, selected_schema
from acpgen.ir.build import build_protocol
from acpgen.ir.capabilities import attach_rules, capability_tree
from acpgen.load.rule_table import RULES_FILE
from acpgen.load.schema import check_schema, load_schema
from acpgen.load.stability import strip_unstable, unstable_by_comparison, unstable_by_marker

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
    experimental: bool = False
    """A draft protocol (v2): its builds say so (:mod:`acpgen.source.protocols`)."""
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What is derived once per revision (the unstable items, the checked manifest)."""

    def unstable_items(self) -> frozenset[str]:
        """Keys of the items that are not stable (compared, or from the description marker)."""
        if "unstable" not in self._memo:
            if self.unstable is None:
                self._memo["unstable"] = unstable_by_marker(self.stable.doc["$defs"])
            else:
                self._memo["unstable"] = unstable_by_comparison(self.stable.doc["$defs"], self.unstable.doc["$defs"])
        found: frozenset[str] = self._memo["unstable"]
        return found

    def protocol(self, variant: ir.Variant, selection: Selection | None = None) -> tuple[ir.Protocol, dict[str, Any]]:
        """The IR of one variant (or of the stable protocol with a selection of unstable features)
        and the schema document it was built from."""
        marks = self.unstable_items()
        chosen, doc = self._document(variant, selection, marks)
        if selection is not None:
            variant = "unstable"  # it holds unstable items, marked as such
        protocol = build_protocol(
            doc, variant=variant, source=chosen.source, protocol_version=self.protocol_version, unstable_items=marks
        )
        widest = (self.unstable or self.stable).doc
        all_paths = frozenset(c.path for c in capability_tree(widest["$defs"], marks))
        protocol = attach_rules(
            protocol, doc, self.rules, marks, all_paths, origin=self.rules_origin, strict=self.strict_capabilities
        )
        manifest = self.manifest()  # every generation checks the feature manifest, whichever the build
        if selection is not None:
            features, selected = selection.features, True
        else:
            features, selected = (manifest.names() if manifest and variant == "unstable" else ()), False
        owners = tuple(
            (key, owner)
            for key in sorted(protocol.unstable_items)
            if manifest is not None and (owner := manifest.owner(key)) is not None
        )
        protocol = dataclasses.replace(
            protocol, features=features, selected=selected, feature_of=owners, experimental=self.experimental
        )
        return protocol, doc

    def _document(
        self, variant: ir.Variant, selection: Selection | None, marks: frozenset[str]
    ) -> tuple[SchemaFile, dict[str, Any]]:
        """The schema file a build comes from and the document it is built from."""
        widest = self.unstable or self.stable
        if selection is not None:
            doc, _ = selected_schema(widest.doc, selection.dropped(marks))
            check_schema(doc, f"{widest.source.file} (with {', '.join(selection.features) or 'no feature'})")
            return widest, doc
        if self.unstable is None:
            doc = strip_unstable(self.stable.doc, marks) if variant == "stable" else self.stable.doc
            check_schema(doc, f"{self.stable.source.file} (stable part)")
            return self.stable, doc
        chosen = self.stable if variant == "stable" else self.unstable
        return chosen, chosen.doc

    def selection(self, names: Sequence[str], origin: str) -> Selection:
        """The features ``names`` (and those they need) of this revision's manifest."""
        manifest = self.manifest()
        if manifest is None:
            raise AcpgenError(
                Problem(
                    what="this schema has no unstable feature manifest, so features cannot be selected",
                    where=origin,
                    hint=f"Add {MANIFEST_FILE} beside the schema, or build --stable or --unstable.",
                )
            )
        return select(manifest, names, origin)

    def manifest(self, *, strict: bool = True) -> Manifest | None:
        """The feature manifest checked against the widest schema of the revision, if it has one
        (not ``strict``: read as far as it matches the schema, see :func:`resolve_manifest`)."""
        if self.features is None:
            return None
        key = f"manifest:{strict}"
        if key not in self._memo:
            self._memo[key] = self._resolve_manifest(self.features, strict=strict)
        found: Manifest = self._memo[key]
        return found

    def _resolve_manifest(self, table: Mapping[str, Any], *, strict: bool) -> Manifest:
        widest = self.unstable or self.stable
        return resolve_manifest(
            table,
            widest.doc,
            self.unstable_items(),
            origin=self.features_origin,
            schema_file=widest.source.file,
            strict=strict,
        )


def read_schema_file(path: Path, *, package: str, version: str, name: str | None = None) -> SchemaFile:
    """Load and check one schema file, recording its sha256."""
    doc = load_schema(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return SchemaFile(doc=doc, source=ir.Source(package=package, version=version, file=name or path.name, sha256=sha))


def render_variant(
    revision: Revision, variant: ir.Variant, package: str, selection: Selection | None = None
) -> dict[str, str]:
    """Every file of the generated package of one variant (or selection of features)."""
    from acpgen.render.package import render  # datamodel-code-generator: imported only to render

    protocol, doc = revision.protocol(variant, selection)
    return render(protocol, doc, package)
