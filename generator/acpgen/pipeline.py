"""The one route from settings to files: a schema revision (pinned, or the user's own files) is
loaded, each build's IR is made from it, and every build is rendered. ``acpgen generate``,
``acpgen vendor`` and ``acpgen features`` all go this way."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Problem
from acpgen.features.check import resolve_manifest
from acpgen.features.manifest import MANIFEST_FILE, load_manifest
from acpgen.features.model import Manifest
from acpgen.features.selection import Selection, select, selected_schema
from acpgen.ir.build import Features, build_protocol
from acpgen.ir.capabilities import RuleTable
from acpgen.ir.requirements import RequirementTable
from acpgen.load.capabilities import capability_properties
from acpgen.load.lock import read_lock, verify_files
from acpgen.load.requirement_table import REQUIREMENTS_FILE, load_requirements
from acpgen.load.rule_table import RULES_FILE, load_rules
from acpgen.load.schema import check_schema, load_schema
from acpgen.load.stability import strip_unstable, unstable_by_comparison, unstable_by_marker
from acpgen.source.config import Build, Settings

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
    requirements: Mapping[str, Any] | None = None
    """The curated conformance requirement table (``schema/conformance-requirements.json``), if any."""
    requirements_origin: str = REQUIREMENTS_FILE
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

    def protocol(self, variant: ir.Variant, selection: Selection | None = None) -> ir.Protocol:
        """The IR of one variant, or of the stable protocol with a selection of unstable features."""
        marks = self.unstable_items()
        chosen, doc = self._document(variant, selection, marks)
        manifest = self.manifest()  # every generation checks the feature manifest, whichever the build
        owners = manifest.owners() if manifest is not None else {}
        if selection is not None:
            variant = "unstable"  # it holds unstable items, marked as such
            features = Features(selection.features, selected=True, owners=owners)
        else:
            names = manifest.names() if manifest is not None and variant == "unstable" else ()
            features = Features(names, owners=owners)
        return build_protocol(
            doc,
            variant=variant,
            source=chosen.source,
            protocol_version=self.protocol_version,
            unstable_items=marks,
            rules=self._rule_table(marks),
            features=features,
            experimental=self.experimental,
            requirement_table=self._requirement_table(marks),
        )

    def _requirement_table(self, marks: frozenset[str]) -> RequirementTable | None:
        if self.requirements is None:
            return None
        widest = (self.unstable or self.stable).doc
        all_paths = frozenset(c.path for c in capability_properties(widest["$defs"], marks))
        return RequirementTable(self.requirements, origin=self.requirements_origin, all_paths=all_paths)

    def _rule_table(self, marks: frozenset[str]) -> RuleTable | None:
        if self.rules is None:
            return None
        widest = (self.unstable or self.stable).doc
        all_paths = frozenset(c.path for c in capability_properties(widest["$defs"], marks))
        return RuleTable(self.rules, origin=self.rules_origin, strict=self.strict_capabilities, all_paths=all_paths)

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


def read_schema_file(
    path: Path, *, package: str, version: str, name: str | None = None, pinned: bool = False
) -> SchemaFile:
    """Load and check one schema file, recording its sha256 (``pinned``: one of the pinned files,
    see :func:`acpgen.load.schema.load_schema`)."""
    doc = load_schema(path, pinned=pinned)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return SchemaFile(doc=doc, source=ir.Source(package=package, version=version, file=name or path.name, sha256=sha))


def pinned_revision(settings: Settings, strict_capabilities: bool | None = None) -> Revision:
    """The pinned schema revision of ``settings`` (its lock verified), with its capability rule table
    and feature manifest."""
    lock = read_lock(settings.schema_dir)
    verify_files(settings.schema_dir, lock)
    rules_path = settings.schema_dir / settings.capability_rules
    manifest_path = settings.schema_dir / settings.feature_manifest
    requirements_path = settings.schema_dir / settings.conformance_requirements

    def pinned(name: str) -> SchemaFile:
        return read_schema_file(
            settings.schema_dir / name, package=lock.package, version=lock.version, name=name, pinned=True
        )

    strict = settings.strict_capabilities if strict_capabilities is None else strict_capabilities
    return Revision(
        stable=pinned(settings.stable_schema),
        unstable=pinned(settings.unstable_schema),
        protocol_version=settings.protocol_version,
        rules=load_rules(rules_path) if rules_path.is_file() else None,
        rules_origin=str(rules_path),
        strict_capabilities=strict,
        requirements=load_requirements(requirements_path)
        if settings.conformance_requirements and requirements_path.is_file()
        else None,
        requirements_origin=str(requirements_path),
        features=load_manifest(manifest_path) if settings.feature_manifest and manifest_path.is_file() else None,
        features_origin=str(manifest_path),
        experimental=settings.experimental,
    )


def local_revision(settings: Settings, stable: Path, unstable: Path | None) -> Revision:
    """A revision of the user's own schema files (``--schema``, ``--unstable-schema``): no lock, no
    rule table, no feature manifest."""
    return Revision(
        stable=read_schema_file(stable, package="local", version="local"),
        unstable=read_schema_file(unstable, package="local", version="local") if unstable is not None else None,
        protocol_version=settings.protocol_version,
        experimental=settings.experimental,
    )


Rendered = Callable[[Build, ir.Protocol, float], None]
"""Told of each package once it is rendered: the build, its IR and the seconds it took."""


def render_builds(
    revision: Revision, builds: Sequence[Build], *, regenerate: str, rendered: Rendered | None = None
) -> dict[str, str]:
    """Every file of every build (formatted in one run of ruff), keyed by path relative to the
    output folder: the one route from a revision to files, for ``generate`` and ``vendor``."""
    from acpgen.render.formatting import format_files  # datamodel-code-generator and ruff: only to render
    from acpgen.render.package import render_unformatted

    files: dict[str, str] = {}
    for build in builds:
        started = time.perf_counter()
        selection = revision.selection(build.features, build.origin) if build.features is not None else None
        protocol = revision.protocol(build.variant, selection)
        files.update(
            render_unformatted(protocol, build.package, folder=build.folder, regenerate=regenerate, tools=build.tools)
        )
        if rendered is not None:
            rendered(build, protocol, time.perf_counter() - started)
    return format_files(files)
