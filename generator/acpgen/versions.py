"""The installed versions of the tools whose output acpgen depends on, read cheaply.

``importlib.metadata`` parses each distribution's metadata with the email package (about
30 ms to import), which a no-op ``acpgen generate`` cannot afford; the version is also in the
name of each distribution's ``*.dist-info`` folder, which this module lists instead, falling
back to ``importlib.metadata`` for a distribution it does not find that way.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_SEPARATORS = re.compile(r"[-_.]+")


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None when it is not installed."""
    found = _dist_infos().get(_normal(distribution))
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


@cache
def _dist_infos() -> dict[str, str]:
    """``{normalised name: version}`` of the ``*.dist-info`` folders on ``sys.path`` (first wins)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                project, _, release = name.removesuffix(".dist-info").partition("-")
                found.setdefault(_normal(project), release)
    return found


def _normal(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()
