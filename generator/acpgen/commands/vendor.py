"""``acpgen vendor``: a renamed, self-contained copy of the bindings inside a user's project.

The copy is rendered from the pinned schema shipped with acpgen (wherever acpgen is installed),
under the import name the project gives it (``myapp._acp``), with headers that name the command
that rewrites it, and a small manifest (``_vendor.json``) that records what it was built from, how,
and the files it wrote (so that the next run replaces the folder only if it holds nothing else:
``acpgen.output.ownership``). Neither records the folder as typed: ``acpgen vendor --check --out
DIR`` reads that manifest, renders the same copy again and reports (exit 1, with a unified diff)
whether the folder still matches it, however ``DIR`` is spelled, wherever the command runs and
wherever the folder has moved: a stale copy after an acpgen or schema update, or a hand edit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acpgen.errors import EXIT_OK, EXIT_STALE, AcpgenError, Problem
from acpgen.render.header import generator_version
from acpgen.render.runtime_files import TOOL_NAMES
from acpgen.source.config import Build, Settings, packaged_settings
from acpgen.source.package_names import refuse_unimportable

if TYPE_CHECKING:
    from acpgen import ir
    from acpgen.output.check_or_write import Outcome

MANIFEST = "_vendor.json"
OUT_PLACEHOLDER = "<this folder>"
"""How the command a copy records names its folder (the copy does not know where it lies)."""


@dataclass(frozen=True, slots=True)
class VendorSpec:
    """What a vendored copy is: its import name, its folder, its build."""

    package: str
    out: Path
    variant: ir.Variant
    features: tuple[str, ...] | None = None
    """The unstable features selected (the stable protocol plus these), if any."""
    protocol: int | None = None
    """The protocol version, when not the settings' own (2: the experimental draft)."""
    tools: tuple[str, ...] = ()
    """The tools the copy holds besides the bindings and their runtime (``--with``), sorted."""

    @property
    def command(self) -> str:
        """The command that writes this copy, its folder named by :data:`OUT_PLACEHOLDER`
        (recorded in its headers and manifest)."""
        words = ["acpgen", "vendor", "--package", self.package]
        if self.features is not None:
            words += [w for name in self.features for w in ("--unstable-feature", name)]
        elif self.variant == "unstable":
            words.append("--unstable")
        if self.protocol is not None:
            words += ["--protocol", str(self.protocol)]
        words += [w for name in self.tools for w in ("--with", name)]
        return f"{shlex.join(words)} --out {OUT_PLACEHOLDER}"

    @property
    def folder(self) -> Path:
        """The copy's folder, absolute (``--out .`` names the folder it is run in)."""
        return self.out.resolve()


def register(commands: Any) -> None:
    """Add the ``vendor`` subcommand to the CLI's subparsers."""
    parser = commands.add_parser(
        "vendor",
        help="write a renamed, self-contained copy of the bindings into your project",
        description=(
            "Write the bindings, renamed, into a folder of your project (replacing that folder when it is "
            "missing, empty or a copy acpgen wrote), or with --check tell whether the copy there is still what "
            "acpgen would write."
        ),
    )
    parser.add_argument("--package", help="the import name of the copy in your project, e.g. myapp._acp")
    parser.add_argument("--out", type=Path, required=True, help="the package folder to write, e.g. src/myapp/_acp")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--unstable", action="store_true", help="vendor the unstable build (default: stable)")
    which.add_argument(
        "--unstable-feature",
        dest="features",
        action="append",
        metavar="NAME",
        help="vendor the stable protocol plus this unstable feature (repeatable; `acpgen features` lists them)",
    )
    parser.add_argument(
        "--protocol", type=int, metavar="N", help="vendor protocol version N (2: the experimental draft v2)"
    )
    parser.add_argument(
        "--with",
        dest="tools",
        action="append",
        choices=TOOL_NAMES,
        metavar="TOOL",
        help="also copy a tool that acpgen otherwise runs itself: "
        + ", ".join(TOOL_NAMES)
        + " (repeatable; `python -m <package>.<tool>` then runs it)",
    )
    parser.add_argument(
        "--check", action="store_true", help="compare the copy at --out with a fresh rendering (from its manifest)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write even over files in --out that acpgen did not write (named before they are deleted)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, _settings: Settings) -> int:
    """The ``vendor`` command: write the copy, or check it."""
    from acpgen.output import check_or_write

    spec = _recorded(args.out) if args.check else _requested(args)
    target = check_or_write.Target(spec.folder.parent, (spec.folder.name,), record=MANIFEST)
    if args.check:
        files: dict[str, str] = {}

        def rendered() -> dict[str, str]:
            files.update(render_vendored(spec))
            return files

        return _checked(spec, check_or_write.check(target, rendered), files)
    edited = edited_files(spec.folder)  # before they are replaced
    done = check_or_write.write(target, lambda: render_vendored(spec), _say, force=args.force)
    if edited:
        _say(
            f"replaced {_files(edited)} since acpgen wrote {'it' if len(edited) == 1 else 'them'}: {', '.join(edited)}"
        )
    built = "stable + " + ", ".join(spec.features) if spec.features is not None else spec.variant
    if done.changed or args.force:
        _say(f"wrote {spec.package} ({built} build) to {spec.out}")
    else:
        _say(f"{spec.out} is up to date ({spec.package}, {built} build)")
    return EXIT_OK


def _checked(spec: VendorSpec, done: Outcome, rendered: dict[str, str]) -> int:
    """Report a check; a stale copy with the command that rewrites it, as it must be typed: with
    ``--force`` (after naming what it deletes) when the folder holds files acpgen did not write."""
    from acpgen.output import ownership

    if not done.stale:
        _say(f"the copy in {spec.out} is up to date")
        return EXIT_OK
    sys.stdout.writelines(done.stale)
    command = spec.command.replace(OUT_PLACEHOLDER, shlex.quote(str(spec.out)))
    edited = edited_files(spec.folder)
    if edited:
        _say(f"{_files(edited)} since acpgen wrote {'it' if len(edited) == 1 else 'them'}: {', '.join(edited)}")
    inside = {rel.partition("/")[2]: text.encode("utf-8") for rel, text in rendered.items()}
    found = ownership.foreign(spec.folder, ownership.Claim(inside, MANIFEST))
    if found is not None and found.guard is None:
        _say(f"rewriting it with --force deletes {ownership.what_force_deletes(found)}")
        command += " --force"
    _say(f"the copy in {spec.out} is stale ({len(done.stale)} file(s)); run `{command}`")
    return EXIT_STALE


def _files(names: list[str]) -> str:
    return f"{len(names)} file{'s' if len(names) != 1 else ''} edited"


def edited_files(folder: Path) -> list[str]:
    """The files of the copy in ``folder`` that differ from what acpgen wrote there (by the sha256
    its manifest records; none known for a manifest without them), sorted."""
    try:
        record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    digests = record.get("sha256") if isinstance(record, dict) else None
    if not isinstance(digests, dict):
        return []
    edited = []
    for name, digest in sorted(digests.items()):
        try:
            data = (folder / name).read_bytes()
        except OSError:
            continue  # a missing file loses no edit
        if hashlib.sha256(data).hexdigest() != digest:
            edited.append(name)
    return edited


def _say(text: str) -> None:
    print(f"acpgen: {text}", file=sys.stderr)


def render_vendored(spec: VendorSpec) -> dict[str, str]:
    """Every file of the copy (and its manifest), keyed by path relative to the folder's parent."""
    from acpgen.pipeline import pinned_revision, render_builds
    from acpgen.source.protocols import for_protocol, refuse_features

    settings = for_protocol(packaged_settings(), spec.protocol)
    refuse_features(settings, spec.features)
    folder = spec.folder.name
    build = Build(spec.variant, spec.package, spec.features, folder=folder, tools=frozenset(spec.tools))
    built: list[ir.Protocol] = []
    files = render_builds(
        pinned_revision(settings), [build], regenerate=spec.command, rendered=lambda _, p, __: built.append(p)
    )
    written = {rel.partition("/")[2]: hashlib.sha256(text.encode("utf-8")).hexdigest() for rel, text in files.items()}
    files[f"{folder}/{MANIFEST}"] = manifest(spec, built[0], written)
    return files


def manifest(spec: VendorSpec, protocol: ir.Protocol, written: dict[str, str]) -> str:
    """The manifest of a copy: what it is, what it was built from, the command that wrote it, and
    every file it wrote (what lets the next run tell them from the user's) with its sha256 (what
    tells an edit)."""
    source = protocol.source
    record = {
        "acpgen": generator_version(),
        "build": spec.variant,
        "features": list(protocol.features),
        "files": sorted([*written, MANIFEST]),
        "sha256": dict(sorted(written.items())),
        "selected": list(spec.features) if spec.features is not None else None,
        "tools": list(spec.tools),
        "command": spec.command,
        "package": spec.package,
        "protocol": protocol.protocol_version,
        "schema": {"file": source.file, "package": source.package, "sha256": source.sha256, "version": source.version},
    }
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def _requested(args: argparse.Namespace) -> VendorSpec:
    refuse_unimportable(args.package, "--package", "myapp._acp")
    if args.out.resolve().name != args.package.rpartition(".")[2]:
        raise AcpgenError(
            Problem(
                what=f"the folder {args.out} cannot be imported as {args.package}",
                where="--out",
                hint="Name the folder after the last part of the package: "
                f"--out .../{args.package.rpartition('.')[2]}.",
            )
        )
    features = tuple(args.features) if args.features else None
    variant: ir.Variant = "unstable" if args.unstable or features else "stable"
    tools = tuple(sorted(set(args.tools or ())))
    return VendorSpec(
        package=args.package, out=args.out, variant=variant, features=features, protocol=args.protocol, tools=tools
    )


def _recorded(out: Path) -> VendorSpec:
    path = out / MANIFEST
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        package, build = record["package"], record["build"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise AcpgenError(
            Problem(
                what=f"no readable vendoring manifest: {error}",
                where=f"{path}",
                hint="Point --out at a folder written by `acpgen vendor` (it holds _vendor.json), or vendor it again.",
            )
        ) from None
    if build not in ("stable", "unstable") or not isinstance(package, str):
        raise AcpgenError(
            Problem(what=f"the manifest names an unknown build {build!r}", where=f"{path}#/build", hint="Vendor again.")
        )
    selected = record.get("selected")
    if selected is not None and not (isinstance(selected, list) and all(isinstance(n, str) for n in selected)):
        raise AcpgenError(
            Problem(
                what="the manifest's selected features are malformed", where=f"{path}#/selected", hint="Vendor again."
            )
        )
    features = tuple(selected) if selected is not None else None
    protocol = record.get("protocol", 1)
    if not isinstance(protocol, int) or isinstance(protocol, bool):
        raise AcpgenError(
            Problem(what=f"the manifest names protocol {protocol!r}", where=f"{path}#/protocol", hint="Vendor again.")
        )
    tools = record.get("tools", [])
    if not (isinstance(tools, list) and all(t in TOOL_NAMES for t in tools)):
        raise AcpgenError(
            Problem(
                what=f"the manifest names unknown tools {tools!r} (known: {', '.join(TOOL_NAMES)})",
                where=f"{path}#/tools",
                hint="Vendor again.",
            )
        )
    return VendorSpec(
        package=package,
        out=out,
        variant=cast("ir.Variant", build),
        features=features,
        protocol=protocol if protocol != 1 else None,
        tools=tuple(sorted(set(tools))),
    )
