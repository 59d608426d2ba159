"""``acpgen init PATH``: a working agent project in a new (or empty) folder, as ``uv init`` and
``cargo new`` make one.

The project: a ``pyproject.toml`` (src layout, pydantic its only dependency, pytest, the type
checkers and jsonschema as dev dependencies), the bindings vendored in ``src/NAME/_acp`` with the
conformance kit (``--with conformance``: the tests run it, the wheel leaves it out), the agent
(``src/NAME/agent.py``, ``python -m NAME``), its tests (a turn in process, the kit on ``python -m
NAME``), a README; ``--client`` adds a client, ``--ci`` a GitHub Actions workflow. NAME is the
folder's name made an identifier unless ``--package`` gives it.

It never touches a folder that holds anything: everything is written into a staging folder beside
PATH, which then takes PATH's place in one rename (a missing or empty PATH), or is removed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from acpgen.commands.vendor import VendorSpec, render_vendored
from acpgen.errors import EXIT_OK, AcpgenError, Problem
from acpgen.render.project import ProjectSpec, render_project
from acpgen.source.config import Settings
from acpgen.source.package_names import identifier_from, refuse_unimportable


def register(commands: Any) -> None:
    """Add the ``init`` subcommand to the CLI's subparsers."""
    parser = commands.add_parser(
        "init",
        help="make a working, tested agent project in a new folder",
        description=(
            "Make a project in PATH (missing or empty): an agent served by `python -m NAME`, the bindings vendored "
            "in src/NAME/_acp with the conformance kit, tests (a turn in process, the kit), a pyproject.toml for uv "
            "or pip. `uv run pytest` inside it runs them."
        ),
    )
    parser.add_argument("path", type=Path, metavar="PATH", help="the project's folder (missing or empty)")
    parser.add_argument(
        "--package", help="the import name of its package (default: the folder's name, as an identifier)"
    )
    parser.add_argument("--client", action="store_true", help="also write a client that starts any agent command")
    parser.add_argument(
        "--ci", action="store_true", help="also write a GitHub Actions workflow (.github/workflows/ci.yml)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--unstable", action="store_true", help="vendor the unstable build (default: stable)")
    which.add_argument(
        "--unstable-feature",
        dest="features",
        action="append",
        metavar="NAME",
        help="vendor the stable protocol plus this unstable feature (repeatable; `acpgen features` lists them)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, _settings: Settings) -> int:
    """The ``init`` command."""
    target = args.path.absolute()
    _refuse_occupied(target)
    name = refuse_unimportable(args.package, "--package", "my_agent") if args.package else identifier_from(target.name)
    if "." in name:
        raise AcpgenError(
            Problem(
                what=f"--package {name}: a project's package is one name",
                where="--package",
                hint="e.g. --package my_agent.",
            )
        )
    source, note = _acpgen_source()
    spec = ProjectSpec(
        name=name,
        distribution=_distribution(target.name, name),
        command=_command(args, target.name),
        client=args.client,
        ci=args.ci,
        acpgen_source=source,
        acpgen_note=note,
    )
    files = render_project(spec)
    features = tuple(args.features) if args.features else None
    vendored = VendorSpec(
        package=f"{name}._acp",
        out=target / spec.bindings,
        variant="unstable" if args.unstable or features else "stable",
        features=features,
        tools=("conformance",),
    )
    for rel, text in render_vendored(vendored).items():
        files[f"src/{name}/{rel}"] = text
    _write(target, files)
    _say(f"made {spec.distribution} in {args.path}: {len(files)} files, the agent in src/{name}/agent.py")
    _say(f"next: cd {shlex.quote(str(args.path))} && uv run pytest")
    return EXIT_OK


def _say(text: str) -> None:
    print(f"acpgen: {text}", file=sys.stderr)


def _refuse_occupied(target: Path) -> None:
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise AcpgenError(
            Problem(
                what=f"{target} is not a folder",
                where=str(target),
                hint="Give init a new folder, or an empty one. Nothing was changed.",
            )
        )
    if target.is_dir() and any(target.iterdir()):
        shown = ", ".join(sorted(entry.name for entry in target.iterdir())[:5])
        raise AcpgenError(
            Problem(
                what=f"{target} is not empty (it holds {shown}); init writes only into a new or empty folder",
                where=str(target),
                hint="Give init a new folder (it makes it), or an empty one. Nothing was changed.",
            )
        )


def _write(target: Path, files: dict[str, str]) -> None:
    """Write ``files`` into a staging folder beside ``target``, then rename it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".acpgen-init-{target.name}-", dir=target.parent))
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        staging.chmod(0o777 & ~_umask())
        os.replace(staging, target)  # over a missing or empty folder only (refused otherwise)
    except OSError as error:
        raise AcpgenError(
            Problem(
                what=f"cannot write the project: {error.strerror or error}",
                where=str(target),
                hint="Give init a new or empty folder you may write to. Nothing was changed.",
            )
        ) from None
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _distribution(folder: str, name: str) -> str:
    """The distribution's name: the folder's, normalised as PEP 503 does (``My Agent`` ->
    ``my-agent``), or the package's when the folder's has no letter or digit."""
    normal = re.sub(r"[^a-z0-9]+", "-", folder.lower()).strip("-")
    return normal if normal and normal[0].isalpha() else name.replace("_", "-").strip("-") or "agent"


def _command(args: argparse.Namespace, folder: str) -> str:
    words = ["acpgen", "init", folder]
    if args.package:
        words += ["--package", args.package]
    words += [flag for flag, on in (("--client", args.client), ("--ci", args.ci), ("--unstable", args.unstable)) if on]
    words += [w for feature in args.features or () for w in ("--unstable-feature", feature)]
    return shlex.join(words)


def _acpgen_source() -> tuple[str, str]:
    """What a CI runner installs this acpgen from: the version control URL it was installed from,
    else its name and version (to be replaced with where you install it from)."""
    try:
        distribution = metadata.distribution("acpgen")
    except metadata.PackageNotFoundError:
        return "acpgen", "Set it to where you install acpgen from (a git URL: acpgen @ git+https://...)."
    direct = json.loads(distribution.read_text("direct_url.json") or "{}")
    vcs = direct.get("vcs_info") if isinstance(direct, dict) else None
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and isinstance(direct.get("url"), str):
        commit = vcs.get("commit_id")
        return f"acpgen @ git+{direct['url']}" + (f"@{commit}" if commit else ""), "Installed from there."
    version = distribution.version
    return f"acpgen=={version}", "Replace it with where you install acpgen from (a git URL: acpgen @ git+https://...)."
