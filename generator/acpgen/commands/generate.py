"""``acpgen generate``: render the packages of the configured builds into the output folder, or
check them there (``--check``), through the one check-or-write step
(:mod:`acpgen.output.check_or_write`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acpgen.errors import EXIT_OK, EXIT_STALE, AcpgenError, Problem
from acpgen.output import check_or_write
from acpgen.source.config import Build, Settings
from acpgen.source.schema_lock import LOCK_NAME

if TYPE_CHECKING:
    from acpgen import ir
    from acpgen.pipeline import Revision

# Rendering pulls in datamodel-code-generator, jsonschema and pydantic: those modules are
# imported by the commands that render, so that a no-op ``acpgen generate`` stays fast.


def register(commands: Any) -> None:
    """Add the ``generate`` subcommand to the CLI's subparsers."""
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
    gen.add_argument(
        "--force",
        action="store_true",
        help="render and write even when nothing changed since the last run, and over files acpgen did not write "
        "in the package folders (named before they are deleted)",
    )
    gen.add_argument("--schema", type=Path, help="a schema file to use instead of the pinned stable schema")
    gen.add_argument("--unstable-schema", type=Path, help="with --schema: the matching unstable schema file")
    gen.add_argument("--out", type=Path, help="output folder (default: output-dir of [tool.acpgen])")
    gen.add_argument(
        "--strict-capabilities",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fail when a capability gates nothing in the rule table (default: strict-capabilities setting)",
    )
    gen.set_defaults(run=run, variants=None)


def _input_files(args: argparse.Namespace, settings: Settings) -> list[Path]:
    if args.schema is not None:
        return [p for p in (args.schema, args.unstable_schema) if p is not None]
    names = (
        settings.stable_schema,
        settings.unstable_schema,
        settings.capability_rules,
        settings.feature_manifest,
        settings.conformance_requirements,
        LOCK_NAME,
    )
    return [settings.schema_dir / name for name in names if name]


def _revision(args: argparse.Namespace, settings: Settings) -> Revision:
    from acpgen.pipeline import local_revision, pinned_revision

    if args.schema is not None:
        return local_revision(settings, args.schema, args.unstable_schema)
    return pinned_revision(settings, args.strict_capabilities)


def _builds(args: argparse.Namespace, settings: Settings, config: str) -> list[Build]:
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
        return [Build("unstable", settings.package, tuple(args.features))]
    if not args.variants and settings.unstable_features:
        origin = f"{config}#/tool/acpgen/unstable-features"
        return [Build("unstable", settings.package, settings.unstable_features, origin)]
    variants: tuple[ir.Variant, ...] = args.variants or (("unstable",) if settings.unstable else ("stable",))
    return [Build(v, settings.unstable_package if v == "unstable" else settings.package) for v in variants]


def run(args: argparse.Namespace, settings: Settings) -> int:
    """The ``generate`` command: write the packages, or check them (``--check``)."""
    from acpgen.source.protocols import for_protocol, refuse_features

    settings = for_protocol(settings, args.protocol)
    refuse_features(settings, args.features)
    builds = _builds(args, settings, args.config)
    out = args.out or settings.output_dir
    target = check_or_write.Target(out, tuple(b.package for b in builds))
    regenerate = settings.regenerate or generate_command(args)

    def render() -> dict[str, str]:
        from acpgen.pipeline import render_builds

        return render_builds(_revision(args, settings), builds, regenerate=regenerate, rendered=_report)

    if args.check:
        return _checked(check_or_write.check(target, render), out, regenerate)
    done = check_or_write.write(target, render, _say, force=args.force, stamp=_stamp(args, settings, builds, target))
    _say(_written(out, done, args.force))
    return EXIT_OK


def _stamp(
    args: argparse.Namespace, settings: Settings, builds: list[Build], target: check_or_write.Target
) -> check_or_write.Stamp:
    """The freshness stamp of this run: every input that shapes the output."""
    shaping = {"settings": repr(settings), "builds": [repr(b) for b in builds], "strict": args.strict_capabilities}
    return check_or_write.stamp(settings.cache_dir, target, _input_files(args, settings), shaping)


def _checked(done: check_or_write.Outcome, out: Path, regenerate: str) -> int:
    if done.stale:
        sys.stdout.writelines(done.stale)
        print(f"acpgen: {len(done.stale)} generated file(s) are stale; run `{regenerate}`", file=sys.stderr)
        return EXIT_STALE
    print(f"acpgen: {out} is up to date", file=sys.stderr)
    return EXIT_OK


def _say(text: str) -> None:
    print(f"acpgen: {text}", file=sys.stderr)


def _report(build: Build, protocol: ir.Protocol, seconds: float) -> None:
    for path in protocol.ungated:
        print(f"acpgen: warning: capability {path} gates nothing ({protocol.build})", file=sys.stderr)
    print(f"acpgen: rendered {build.package} ({protocol.build}) in {seconds:.2f}s", file=sys.stderr)


def _written(out: Path, done: check_or_write.Outcome, forced: bool) -> str:
    if done.fresh:
        return f"{out} is up to date (no input changed since the last run)"
    if not done.changed and not forced:
        return f"{out} is up to date (rendered {done.rendered} files, none changed)"
    return f"wrote {done.rendered} files under {out} ({len(done.changed)} changed, added or removed)"


def generate_command(args: argparse.Namespace) -> str:
    """The ``acpgen generate`` command line that builds what ``args`` asks for, without the paths
    typed (``--schema``, ``--out``): what a generated file's header names as regenerating it."""
    words = ["acpgen", "generate"]
    variants = tuple(args.variants or ())
    words += {("stable",): ["--stable"], ("unstable",): ["--unstable"], ("stable", "unstable"): ["--both"]}.get(
        variants, []
    )
    words += [w for name in args.features or () for w in ("--unstable-feature", name)]
    if args.protocol is not None:
        words += ["--protocol", str(args.protocol)]
    return shlex.join(words)
