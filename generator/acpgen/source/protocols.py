"""The protocol versions acpgen builds, and where each one's schema and tables live.

Protocol v1 is what the settings describe (``[tool.acpgen]``). The pinned npm package also ships
a draft of protocol v2 (``schema/v2/``); ``acpgen generate --protocol 2`` builds it as packages
of their own, named after the v1 ones with a ``_v2`` suffix and marked experimental, with their
own curated capability rule table and no feature manifest (the unstable features are named for
v1).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from acpgen.errors import AcpgenError, Problem
from acpgen.source.config import Settings


@dataclass(frozen=True, slots=True)
class Layout:
    """Where one protocol version's inputs live (relative to the schema folder) and what its
    packages are called."""

    version: int
    folder: str
    capability_rules: str
    suffix: str
    """Appended to the package names of the settings (``acp_bindings`` -> ``acp_bindings_v2``)."""
    experimental: bool


DRAFTS: dict[int, Layout] = {
    2: Layout(version=2, folder="v2", capability_rules="capability-rules-v2.json", suffix="_v2", experimental=True),
}
"""Protocol versions other than the settings' own, by number."""


def refuse_features(settings: Settings, features: object, where: str = "--unstable-feature") -> None:
    """Refuse a selection of unstable features for a protocol that has none (the draft v2: the
    features of the manifest are named for v1)."""
    if features and not settings.feature_manifest:
        version = settings.protocol_version
        raise AcpgenError(
            Problem(
                what=f"protocol v{version} has no unstable features yet (the features are those of v1)",
                where=where,
                hint=f"Build --stable, --unstable or --both with --protocol {version}, "
                "or drop --protocol to select v1 features.",
            )
        )


def for_protocol(settings: Settings, version: int | None, where: str = "--protocol") -> Settings:
    """The settings that build protocol ``version`` (the settings' own when ``None``); a draft's are
    marked ``experimental``."""
    if version is None or version == settings.protocol_version:
        return settings
    layout = DRAFTS.get(version)
    if layout is None:
        known = sorted({settings.protocol_version, *DRAFTS})
        raise AcpgenError(
            Problem(
                what=f"acpgen builds protocol versions {', '.join(map(str, known))}, not {version}",
                where=where,
                hint=f"Give one of {', '.join(map(str, known))}.",
            )
        )
    return dataclasses.replace(
        settings,
        unstable_features=(),  # they name v1 features
        stable_schema=f"{layout.folder}/schema.json",
        unstable_schema=f"{layout.folder}/schema.unstable.json",
        package=settings.package + layout.suffix,
        unstable_package=settings.package + layout.suffix + "_unstable",
        protocol_version=layout.version,
        capability_rules=layout.capability_rules,
        feature_manifest="",
        conformance_requirements="",  # the curated table cites v1 pages: a draft gets the derived ones
        experimental=layout.experimental,
    )
