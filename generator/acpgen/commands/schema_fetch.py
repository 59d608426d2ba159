"""``acpgen schema fetch``: download the npm package's schema files, verify them and pin them with
a lock in the schema folder (:func:`acpgen.output.project_files.fetch_schema`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from acpgen.errors import EXIT_OK
from acpgen.load.lock import read_lock
from acpgen.source.config import Settings, refuse_shipped_schema


def register(schema_commands: Any) -> None:
    """Add ``fetch`` to the actions of ``acpgen schema``."""
    fetch = schema_commands.add_parser("fetch", help="fetch the schema from the npm package and lock it")
    fetch.add_argument("--version", help="package version to pin (default: the version in the lock)")
    fetch.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """The ``schema fetch`` action: pin ``--version`` (or the locked version again)."""
    from acpgen.output.project_files import fetch_schema

    refuse_shipped_schema(settings, args.config, "`schema fetch`")
    version = args.version or read_lock(settings.schema_dir).version
    lock = fetch_schema(version, settings.schema_dir)
    print(f"acpgen: pinned {lock.package}@{lock.version} ({lock.integrity})", file=sys.stderr)
    return EXIT_OK
