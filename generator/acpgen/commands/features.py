"""``acpgen features``: the unstable features of the pinned schema, with their items, dependencies and
capabilities; with ``--select``, what a build of some of them would keep."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from acpgen.errors import EXIT_OK, AcpgenError, Problem
from acpgen.features.model import Feature, Manifest
from acpgen.load.inventory import item_owner
from acpgen.source.config import Settings

FORMATS = ("text", "json")


def register(commands: Any) -> None:
    """Add the ``features`` subcommand to the CLI's subparsers."""
    parser = commands.add_parser(
        "features",
        help="list the unstable features of the pinned schema",
        description=(
            "List every unstable feature of the feature manifest (checked against the pinned schema first): "
            "what it adds, its link, the features it needs, its capabilities and the unstable items it owns. "
            "With --select, show what a build of the selected features and their dependencies keeps."
        ),
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format: text (default) or json")
    parser.add_argument(
        "--select",
        action="append",
        default=None,
        metavar="NAME",
        help="a feature to select (repeatable): show the selection instead of the list",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from acpgen.features.selection import select
    from acpgen.pipeline import pinned_revision

    revision = pinned_revision(settings)
    manifest = revision.manifest()
    if manifest is None:
        raise AcpgenError(
            Problem(
                "there is no feature manifest",
                str(settings.schema_dir / settings.feature_manifest),
                "Create it (see docs/unstable-features.md), or set feature-manifest in [tool.acpgen].",
            )
        )
    if args.select is not None:
        selection = select(manifest, args.select, "--select")
        data: dict[str, Any] = {
            "requested": list(selection.requested),
            "features": list(selection.features),
            "capabilities": list(selection.capabilities),
            "items": sorted(selection.items),
        }
        sys.stdout.write(_json(data) if args.format == "json" else _selection_text(data))
        return EXIT_OK
    sys.stdout.write(_json(to_json(manifest)) if args.format == "json" else to_text(manifest))
    return EXIT_OK


def to_json(manifest: Manifest) -> dict[str, Any]:
    """The manifest as JSON data: every feature with its entries and every item it owns."""
    return {"manifest": manifest.origin, "features": [_feature_json(f) for f in manifest.features]}


def _feature_json(feature: Feature) -> dict[str, Any]:
    return {
        "name": feature.name,
        "description": feature.description,
        "link": feature.link,
        "rationale": feature.rationale,
        "dependencies": sorted(feature.dependencies),
        "capabilities": list(feature.capabilities),
        "items": list(feature.items),
        "owns": sorted(feature.owns),
    }


def to_text(manifest: Manifest) -> str:
    """The manifest for a terminal: one block per feature."""
    total = sum(len(f.owns) for f in manifest.features)
    lines = [f"{len(manifest.features)} unstable features owning {total} unstable items ({manifest.origin})"]
    for feature in manifest.features:
        lines += ["", f"{feature.name} ({len(feature.owns)} items)", f"  {feature.description}"]
        if feature.link:
            lines.append(f"  link: {feature.link}")
        if feature.rationale:
            lines.append(f"  no upstream cargo feature: {feature.rationale}")
        lines.append(f"  depends on: {', '.join(sorted(feature.dependencies)) or '-'}")
        lines.append(f"  capabilities: {', '.join(feature.capabilities) or '-'}")
        lines.append("  items:")
        lines += [f"    {key}{_covers(feature, key)}" for key in feature.items]
    return "\n".join(lines) + "\n"


def _covers(feature: Feature, key: str) -> str:
    """`` (+N)``: how many fields, variants and values a type key owns besides the type itself."""
    if not key.startswith("type:"):
        return ""
    name = key.removeprefix("type:")
    held = [k for k in feature.owns if not k.startswith(("type:", "method:")) and item_owner(k) == name]
    return f" (+{len(held)})" if held else ""


def _selection_text(data: dict[str, Any]) -> str:
    lines = [
        f"requested: {', '.join(data['requested']) or '-'}",
        f"features (with their dependencies): {', '.join(data['features']) or '-'}",
        f"capabilities: {', '.join(data['capabilities']) or '-'}",
        f"unstable items kept ({len(data['items'])}):",
        *(f"  {key}" for key in data["items"]),
    ]
    return "\n".join(lines) + "\n"


def _json(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"
