"""The command line: ``acpgen generate``, ``acpgen schema fetch``, ``acpgen diff``, ``acpgen vendor``,
``acpgen features``."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acpgen.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_STALE, AcpgenError, Problem
from acpgen.output import atomic_write, freshness
from acpgen.render.header import generator_version
from acpgen.source.config import Settings, load_settings
from acpgen.source.schema_lock import LOCK_NAME, read_lock, verify_files

if TYPE_CHECKING:
    from acpgen import ir
    from acpgen.pipeline import Revision, SchemaFile

# Rendering pulls in datamodel-code-generator, jsonschema and pydantic: those modules are
# imported by the commands that render, so that a no-op ``acpgen generate`` stays fast.

UPDATE_COMMAND = "make generate"

# Subcommands defined in modules of their own: each module's ``register`` adds its parser to the
# subparsers object and sets ``run`` to a function (args, settings) -> exit code. A module is
# imported only when its command runs, or when every command is listed (help, an error).
_EXTRA_COMMANDS: dict[str, str] = {
    "diff": "acpgen.diff.command",
    "vendor": "acpgen.vendor",
    "features": "acpgen.features_command",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``acpgen`` console script."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parser(_command_of(words)).parse_args(words)
    try:
        settings = load_settings(Path(args.config))
        return int(args.run(args, settings))
    except AcpgenError as error:
        for problem in error.problems:
            print(f"acpgen: error: {problem.message()}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _command_of(words: Sequence[str]) -> str | None:
    """The command named in ``words`` (after the global ``--config FILE``), or ``None`` when the
    words start otherwise (``--help``, ``--version``, nothing)."""
    rest = iter(words)
    for word in rest:
        if word == "--config":
            next(rest, None)
        elif not word.startswith("--config="):
            return None if word.startswith("-") else word
    return None


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, the other commands defined in modules of
    their own are left out (their modules not imported)."""
    parser = argparse.ArgumentParser(prog="acpgen", description="Typed Python bindings for the Agent Client Protocol.")
    parser.add_argument("--config", default="pyproject.toml", help="pyproject.toml holding [tool.acpgen]")
    parser.add_argument("--version", action="version", version=f"acpgen {generator_version()}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    _add_generate(commands)

    schema = commands.add_parser("schema", help="manage the pinned schema")
    schema_commands = schema.add_subparsers(required=True, metavar="ACTION")
    fetch = schema_commands.add_parser("fetch", help="fetch the schema from the npm package and lock it")
    fetch.add_argument("--version", help="package version to pin (default: the version in the lock)")
    fetch.set_defaults(run=_fetch)

    for name, module in _EXTRA_COMMANDS.items():
        if command is None or command == name or command not in (*_EXTRA_COMMANDS, "generate", "schema"):
            importlib.import_module(module).register(commands)
    return parser


def _add_generate(commands: Any) -> None:
    """The ``generate`` command's parser."""
    gen = commands.add_parser("generate", help="render generated/ from the pinned schema")
    which = gen.add_mutually_exclusive_group()
    which.add_argument("--unstable", dest="variants", action="store_const", const=("unstable",), help="unstable build")
    which.add_argument("--stable", dest="variants", action="store_const", const=("stable",), help="stable build")
    which.add_argument(
        "--both", dest="variants", action="store_const", const=("stable", "unstable"), help="both builds"
    )
    gen.add_argument(
        "--unstable-feature",
        dest="features",
        action="append",
        metavar="NAME",
        help="build the stable protocol plus this unstable feature (repeatable; `acpgen features` lists them)",
    )
    gen.add_argument(
        "--protocol",
        type=int,
        metavar="N",
        help="build protocol version N: 2 is the draft v2 schema (schema/v2/), as experimental "
        "packages named with a _v2 suffix (default: protocol-version of [tool.acpgen], 1)",
    )
    gen.add_argument("--check", action="store_true", help="compare with generated/ instead of writing; exit 1 if stale")
    gen.add_argument("--force", action="store_true", help="render even when no input changed since the last run")
    gen.add_argument("--schema", type=Path, help="a schema file to use instead of the pinned stable schema")
    gen.add_argument("--unstable-schema", type=Path, help="with --schema: the matching unstable schema file")
    gen.add_argument("--out", type=Path, help="output folder (default: output-dir of [tool.acpgen])")
    gen.add_argument(
        "--strict-capabilities",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fail when a capability gates nothing in the rule table (default: strict-capabilities setting)",
    )
    gen.set_defaults(run=_generate, variants=None)


def _input_files(args: argparse.Namespace, settings: Settings) -> list[Path]:
    if args.schema is not None:
        return [p for p in (args.schema, args.unstable_schema) if p is not None]
    names = (
        settings.stable_schema,
        settings.unstable_schema,
        settings.capability_rules,
        settings.feature_manifest,
        LOCK_NAME,
    )
    return [settings.schema_dir / name for name in names if name]


def _revision(args: argparse.Namespace, settings: Settings, experimental: bool) -> Revision:
    from acpgen.pipeline import Revision, read_schema_file

    if args.schema is not None:
        stable = read_schema_file(args.schema, package="local", version="local")
        unstable = (
            read_schema_file(args.unstable_schema, package="local", version="local")
            if args.unstable_schema is not None
            else None
        )
        return Revision(
            stable=stable, unstable=unstable, protocol_version=settings.protocol_version, experimental=experimental
        )
    return pinned_revision(settings, args.strict_capabilities, experimental=experimental)


def pinned_revision(
    settings: Settings, strict_capabilities: bool | None = None, *, experimental: bool = False
) -> Revision:
    """The pinned schema revision of ``settings`` (lock verified), with its capability rule table and
    feature manifest; ``experimental`` marks a draft protocol's build (:mod:`acpgen.source.protocols`)."""
    from acpgen.features.manifest import load_manifest
    from acpgen.load.rule_table import load_rules
    from acpgen.pipeline import Revision, read_schema_file

    lock = read_lock(settings.schema_dir)
    verify_files(settings.schema_dir, lock)
    rules_path = settings.schema_dir / settings.capability_rules
    manifest_path = settings.schema_dir / settings.feature_manifest

    def pinned(name: str) -> SchemaFile:
        return read_schema_file(settings.schema_dir / name, package=lock.package, version=lock.version, name=name)

    strict = settings.strict_capabilities if strict_capabilities is None else strict_capabilities
    return Revision(
        stable=pinned(settings.stable_schema),
        unstable=pinned(settings.unstable_schema),
        protocol_version=settings.protocol_version,
        rules=load_rules(rules_path) if rules_path.is_file() else None,
        rules_origin=str(rules_path),
        strict_capabilities=strict,
        features=load_manifest(manifest_path) if settings.feature_manifest and manifest_path.is_file() else None,
        features_origin=str(manifest_path),
        experimental=experimental,
    )


@dataclass(frozen=True, slots=True)
class _Build:
    """One package to render: its variant, or the features selected, and its name."""

    variant: ir.Variant
    package: str
    features: tuple[str, ...] | None = None
    """The selected unstable features, for a selection build; where they were given."""
    origin: str = "--unstable-feature"


def _builds(args: argparse.Namespace, settings: Settings, config: str) -> list[_Build]:
    if args.features and args.variants:
        raise AcpgenError(
            Problem(
                what="--unstable-feature selects what one build holds; it cannot be combined with "
                "--stable, --unstable or --both",
                where="--unstable-feature",
                hint="Drop one of them: the stable build is no feature, the unstable build every feature.",
            )
        )
    if args.features:
        return [_Build("unstable", settings.package, tuple(args.features))]
    if not args.variants and settings.unstable_features:
        origin = f"{config}#/tool/acpgen/unstable-features"
        return [_Build("unstable", settings.package, settings.unstable_features, origin)]
    variants: tuple[ir.Variant, ...] = args.variants or (("unstable",) if settings.unstable else ("stable",))
    return [_Build(v, settings.unstable_package if v == "unstable" else settings.package) for v in variants]


def _generate(args: argparse.Namespace, settings: Settings) -> int:
    from acpgen.source.protocols import for_protocol

    settings, experimental = for_protocol(settings, args.protocol)
    builds = _builds(args, settings, args.config)
    out = args.out or settings.output_dir
    packages = [b.package for b in builds]
    key = freshness.fingerprint(
        _input_files(args, settings),
        {"settings": repr(settings), "builds": [repr(b) for b in builds], "strict": args.strict_capabilities},
    )
    stamp = freshness.stamp_path(settings.cache_dir, out, packages)
    if not args.check:  # first finish what a killed run left, so that its output is whole
        atomic_write.recover(out)
        atomic_write.recover(stamp.parent)
    if not args.check and not args.force and freshness.is_fresh(stamp, key, out, packages):
        print(f"acpgen: {out} is up to date (no input changed since the last run)", file=sys.stderr)
        return EXIT_OK
    from acpgen.output.folders import package_folders, stale_files
    from acpgen.render.formatting import format_files
    from acpgen.render.package import render_unformatted

    revision = _revision(args, settings, experimental)
    files: dict[str, str] = {}
    for build in builds:
        started = time.perf_counter()
        selection = revision.selection(build.features, build.origin) if build.features is not None else None
        protocol, doc = revision.protocol(build.variant, selection)
        for path in protocol.ungated:
            print(f"acpgen: warning: capability {path} gates nothing ({protocol.build})", file=sys.stderr)
        files.update(render_unformatted(protocol, doc, build.package))
        elapsed = time.perf_counter() - started
        print(f"acpgen: rendered {build.package} ({protocol.build}) in {elapsed:.2f}s", file=sys.stderr)
    files = format_files(files)  # one run of ruff for every package
    if args.check:
        diffs = stale_files(out, files, tuple(packages))
        if diffs:
            sys.stdout.writelines(diffs)
            print(f"acpgen: {len(diffs)} generated file(s) are stale; run `{UPDATE_COMMAND}`", file=sys.stderr)
            return EXIT_STALE
        print(f"acpgen: {out} is up to date", file=sys.stderr)
        return EXIT_OK
    atomic_write.write(out, package_folders(files, tuple(packages)))
    freshness.record(stamp, key, out, packages)
    print(f"acpgen: wrote {len(files)} files under {out}", file=sys.stderr)
    return EXIT_OK


def _fetch(args: argparse.Namespace, settings: Settings) -> int:
    from acpgen.source.fetch import fetch_schema

    version = args.version or read_lock(settings.schema_dir).version
    lock = fetch_schema(version, settings.schema_dir)
    print(f"acpgen: pinned {lock.package}@{lock.version} ({lock.integrity})", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
