"""acpgen's own data, found where acpgen is installed: the templates and the pinned schema.

``templates/`` and ``schema/`` (the pinned schema files, their lock, the capability rule tables,
the unstable feature manifest) live once, at the top of the repository. The package reaches them
as ``acpgen/data/templates`` and ``acpgen/data/schema``: in a checkout and an editable install
those are links to the repository's folders, and building a wheel copies what they point to into
it. Either way they are found through :mod:`importlib.resources`, relative to the installed
package, never by counting parent folders.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from acpgen.errors import AcpgenError, Problem


@cache
def package_dir(package: str = "acpgen") -> Path:
    """The folder of an installed package of acpgen, as a file system path."""
    found = files(package)
    if not isinstance(found, Path):
        raise AcpgenError(
            Problem(
                what=f"acpgen's package {package} is not a folder on disk ({found})",
                where=package,
                hint="Install acpgen from its wheel or a checkout (uv pip install, pipx install), not as a zip.",
            )
        )
    return found


def data_dir(name: str) -> Path:
    """``acpgen/data/<name>``: ``templates`` or ``schema``."""
    return package_dir() / "data" / name


def templates_dir() -> Path:
    """The Jinja templates (``templates/`` of the repository)."""
    return data_dir("templates")


def schema_dir() -> Path:
    """The pinned schema with its lock, rule tables and feature manifest (``schema/`` of the repository)."""
    return data_dir("schema")
