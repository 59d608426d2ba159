"""``acpgen diff OLD [NEW]``: what changed between two spec revisions, and whom it breaks."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from acpgen.errors import EXIT_OK, EXIT_STALE
from acpgen.source.config import Settings

FORMATS = ("text", "markdown", "json", "github")
EXIT_FINDINGS = EXIT_STALE
"""Exit code when ``--fail-on`` found a finding at or above its level."""


def register(commands: Any) -> None:
    """Add the ``diff`` subcommand to the CLI's subparsers."""
    parser = commands.add_parser(
        "diff",
        help="compare two ACP schema revisions",
        description=(
            "Compare two ACP schema revisions item by item (methods, types, fields, union variants, enum "
            "values; stable and unstable) and classify each change. A side is a schema folder or file, "
            "REF:PATH in this git repository (HEAD~1:schema), or a version of the npm package (2.3.0, npm:2.3.0)."
        ),
    )
    parser.add_argument("old", nargs="?", help="the older revision")
    parser.add_argument("new", nargs="?", help="the newer revision (default: the pinned schema folder)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="output format: text (default), markdown (a pull-request comment), json, github (CI annotations)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("breaking", "warning", "info"),
        help="exit 1 when a finding at this level or above exists",
    )
    parser.add_argument(
        "--stable-only", action="store_true", help="report changes of stable items only (what the stable build sees)"
    )
    parser.add_argument("--list-rules", action="store_true", help="list the rule ids and exit")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from acpgen.diff.catalogue import LEVELS
    from acpgen.diff.compare import compare
    from acpgen.diff.report import rules_table, to_github, to_json, to_markdown, to_text
    from acpgen.diff.sources import load_side
    from acpgen.source.fetch import DEFAULT_PACKAGE

    if args.list_rules:
        sys.stdout.write(rules_table())
        return EXIT_OK
    if args.old is None:
        print("acpgen diff: error: give the older revision (acpgen diff OLD [NEW])", file=sys.stderr)
        return 2
    new_spec = args.new or str(settings.schema_dir)
    old = load_side(args.old, settings.cache_dir, package=DEFAULT_PACKAGE)
    new = load_side(new_spec, settings.cache_dir, package=DEFAULT_PACKAGE)
    findings = compare(old, new)
    if args.stable_only:
        findings = [f for f in findings if f.stability == "stable"]
    render = {"text": to_text, "markdown": to_markdown, "json": to_json, "github": to_github}[args.format]
    sys.stdout.write(render(old.label, new.label, findings))
    if args.fail_on is not None:
        threshold = LEVELS.index(args.fail_on)
        if any(LEVELS.index(f.level) <= threshold for f in findings):
            return EXIT_FINDINGS
    return EXIT_OK
