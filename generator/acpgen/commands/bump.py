"""``acpgen schema bump --version X``: move the schema pin, and everything that follows it, in one step.

1. Read the pins of ``[tool.acpgen.bump]`` (:mod:`acpgen.source.pins`); a pin that names no
   version (a reworded text, a missing file) stops here.
2. Download ``package@X`` and verify it (:func:`acpgen.source.fetch.download_schema`).
3. Build every protocol and variant the schema folder holds from the new files and the project's
   curated tables (rule tables, feature manifest), in a temporary folder: a version the tables do
   not fit (a capability or feature they name that it lacks) stops here with every problem, and
   nothing has changed.
4. Write the schema files and the lock (one atomic write), then rewrite the text pins.
5. Regenerate (the ``regenerate`` setting, ``make generate`` here; else ``acpgen generate``), then
   run the commands of ``run`` in order (npm moves its pins; goldens that follow the schema).
6. Check that every pin now names X, and print the diff report (Markdown) between the previous
   pin and X on standard output: what ``acpgen diff OLD --format markdown`` prints. Everything
   else (the commands' output too) goes to standard error.

``--check`` changes nothing: exit 1 naming every pin that disagrees with the lock, and what to run.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acpgen.errors import EXIT_OK, EXIT_STALE, AcpgenError, Problem
from acpgen.load.lock import read_lock
from acpgen.source.config import Settings, refuse_shipped_schema
from acpgen.source.fetch import DEFAULT_PACKAGE
from acpgen.source.pins import BumpConfig, disagreements, load_bump_config, moved, sightings
from acpgen.source.schema_lock import LOCK_NAME, SchemaLock, lock_to_json

if TYPE_CHECKING:
    from acpgen.diff.snapshot import Snapshot


def register(schema_commands: Any) -> None:
    """Add ``bump`` to the actions of ``acpgen schema``."""
    parser = schema_commands.add_parser(
        "bump",
        help="move the schema pin and everything that follows it, and print the diff report",
        description=(
            "Fetch and lock the schema of the npm package at a version, after checking that the curated "
            "tables fit it; rewrite every pin of [tool.acpgen.bump]; regenerate; run the bump's commands; "
            "print the diff report (Markdown) between the previous pin and the new one."
        ),
    )
    parser.add_argument("--version", help="package version to pin (default: the locked version)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing: exit 1 naming every pin of [tool.acpgen.bump] that disagrees with the lock",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    config = load_bump_config(Path(args.config))
    refuse_shipped_schema(settings, args.config, "a bump")
    if args.check:
        return _check(config, settings)
    old = read_lock(settings.schema_dir) if (settings.schema_dir / LOCK_NAME).is_file() else None
    package = old.package if old is not None else DEFAULT_PACKAGE
    version = args.version or (old.version if old is not None else None)
    if version is None:
        raise AcpgenError(
            Problem(
                what="there is no schema lock to bump from, and no version was given",
                where=str(settings.schema_dir / LOCK_NAME),
                hint="Give the version: `acpgen schema bump --version x.y.z`.",
            )
        )
    sightings(config, package)  # every pin can be found before anything changes
    from acpgen.output.project_files import install_schema, rewrite_files
    from acpgen.source.fetch import download_schema

    files, lock = download_schema(version, package)
    _check_fit(settings, files, lock)
    before = _old_side(settings, old)
    install_schema(settings.schema_dir, files, lock)
    _say(f"pinned {lock.package}@{lock.version} ({lock.integrity}) in {settings.schema_dir}")
    pins = moved(config, package, version)
    rewrite_files(config.root, pins)
    if pins:
        _say(f"moved the version named in {', '.join(pins)}")
    _regenerate(args.config, settings, config, package, version)
    problems = disagreements(sightings(config, package), package, version, config)
    if before is not None:
        sys.stdout.write(_report(before, settings, lock))
    if problems:
        raise AcpgenError(
            *problems,
            Problem(
                what="the pins above did not move with the schema",
                where=f"{config.origin}/run",
                hint="A JSON pin is moved by a command of `run` (npm install ... {package}@{version}); "
                "add the command that writes it, or make it a text pin.",
            ),
        )
    if old is not None and old.version == version:
        _say(f"already at {package} {version}: fetched again, pins moved, regenerated; review the changes")
    else:
        _say(f"bumped {package} {old.version if old else '(none)'} -> {version}; review the changes and the report")
    return EXIT_OK


def _regenerate(config_file: str, settings: Settings, config: BumpConfig, package: str, version: str) -> None:
    """Regenerate (the ``regenerate`` setting, else ``acpgen generate``), then run the bump's commands."""
    regenerate = settings.regenerate or shlex.join(["acpgen", "--config", config_file, "generate"])
    regenerate_words = (
        shlex.split(settings.regenerate)
        if settings.regenerate
        else [sys.executable, "-m", "acpgen", "--config", str(Path(config_file).resolve()), "generate"]
    )
    _run(config, regenerate, regenerate_words, f"{config_file}#/tool/acpgen/regenerate", version)
    for index, command in enumerate(config.run):
        words = [_filled(w, package, version) for w in shlex.split(command)]
        _run(config, shlex.join(words), words, f"{config.origin}/run/{index}", version)


def _filled(word: str, package: str, version: str) -> str:
    """A word of a ``run`` command with its placeholders filled: ``{version}``, ``{package}``, and
    ``{python}``, the interpreter running acpgen (whose environment holds what the project
    installed: ``{python} -m pytest`` needs no ``uv`` on PATH)."""
    return word.replace("{version}", version).replace("{package}", package).replace("{python}", sys.executable)


def _check(config: BumpConfig, settings: Settings) -> int:
    lock = read_lock(settings.schema_dir)
    found = sightings(config, lock.package)
    problems = disagreements(found, lock.package, lock.version, config)
    for problem in problems:
        print(f"acpgen: {problem.message()}", file=sys.stderr)
    if problems:
        return EXIT_STALE
    _say(f"{len(found)} pinned place(s) name {lock.package} {lock.version}, as the lock does")
    return EXIT_OK


def _say(text: str) -> None:
    print(f"acpgen: {text}", file=sys.stderr, flush=True)


def _check_fit(settings: Settings, files: dict[str, bytes], lock: SchemaLock) -> None:
    """Build every protocol and variant the new files hold with the project's curated tables, in a
    temporary folder; AcpgenError (the problems, as about the schema folder) if one fails."""
    from acpgen.source.protocols import DRAFTS, for_protocol

    with tempfile.TemporaryDirectory(prefix="acpgen-bump-") as tmp:
        staged = Path(tmp)
        for name, data in files.items():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            (staged / name).write_bytes(data)
        (staged / LOCK_NAME).write_text(lock_to_json(lock), encoding="utf-8")
        versions = [settings.protocol_version]
        versions += [v for v, layout in DRAFTS.items() if f"{layout.folder}/schema.json" in files and v not in versions]
        problems: list[Problem] = []
        home = settings.schema_dir.resolve()
        for protocol in versions:
            real = for_protocol(settings, protocol)
            trial = dataclasses.replace(
                real,
                schema_dir=staged,
                capability_rules=str(home / real.capability_rules),
                feature_manifest=str(home / real.feature_manifest) if real.feature_manifest else "",
                conformance_requirements=str(home / real.conformance_requirements)
                if real.conformance_requirements
                else "",
            )
            found = _build_problems(trial)
            if found and trial.feature_manifest:  # the manifest is checked first: the rule tables too
                found += _build_problems(dataclasses.replace(trial, feature_manifest="", unstable_features=()))
            for problem in found:
                told = _as_in(problem, (tmp, str(home)), str(settings.schema_dir))
                if told not in problems:
                    problems.append(told)
    if problems:
        problems.append(
            Problem(
                what=f"the curated tables do not fit {lock.package}@{lock.version}; nothing was changed",
                where=str(settings.schema_dir),
                hint="Update the tables named above for this version (docs/maintainers.md), then bump again.",
            )
        )
        raise AcpgenError(*problems)


def _build_problems(settings: Settings) -> list[Problem]:
    """What stops the builds of ``settings`` (both variants, and its selection of features)."""
    from acpgen.pipeline import VARIANTS, pinned_revision

    try:
        revision = pinned_revision(settings)
        for variant in VARIANTS:
            revision.protocol(variant)
        if settings.unstable_features:
            origin = "[tool.acpgen] unstable-features"
            revision.protocol("unstable", revision.selection(settings.unstable_features, origin))
    except AcpgenError as error:
        return list(error.problems)
    return []


def _as_in(problem: Problem, folders: tuple[str, ...], real: str) -> Problem:
    """A problem found in the trial (the temporary folder, the tables by their absolute paths), told
    about the schema folder as the settings name it."""
    what, where = problem.what, problem.where
    for folder in folders:
        what, where = what.replace(folder, real), where.replace(folder, real)
    return Problem(what, where, problem.hint)


def _old_side(settings: Settings, old: SchemaLock | None) -> Snapshot | None:
    """The pinned revision before the bump, as ``acpgen diff OLD`` reads the npm version OLD (no
    curated tables); None when there is none or it cannot be read (the report is then skipped)."""
    from acpgen.diff.sources import load_files, locate

    if old is None:
        return None
    try:
        located = dataclasses.replace(locate(settings.schema_dir), rules=None, features=None)
        return load_files(f"{old.package}@{old.version}", located)
    except AcpgenError as error:
        _say(f"no diff report: the previous schema cannot be read ({error.problems[0].message()})")
        return None


def _report(before: Snapshot, settings: Settings, lock: SchemaLock) -> str:
    from acpgen.diff.compare import compare
    from acpgen.diff.report import to_markdown
    from acpgen.diff.sources import load_files, locate

    after = load_files(f"{lock.package}@{lock.version} ({settings.schema_dir})", locate(settings.schema_dir))
    return to_markdown(before.label, after.label, compare(before, after))


def _run(config: BumpConfig, shown: str, words: list[str], origin: str, version: str) -> None:
    """Run one command from the project's folder, its output on standard error; AcpgenError if it fails."""
    _say(f"running `{shown}`")
    again = f"fix what it printed, then run `{config.bump_command(version)}` again (it finishes what is left)"
    try:
        with subprocess.Popen(
            words, cwd=config.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as child:
            assert child.stdout is not None
            for line in child.stdout:
                sys.stderr.write(line)
            code = child.wait()
    except OSError as error:
        raise AcpgenError(
            Problem(
                what=f"cannot run `{shown}`: {error}", where=origin, hint=f"Install it or correct the command; {again}."
            )
        ) from None
    if code != 0:
        raise AcpgenError(
            Problem(
                what=f"`{shown}` failed with exit code {code}; the schema and the text pins are moved to {version}",
                where=origin,
                hint=again[0].upper() + again[1:] + ".",
            )
        )
