"""Import names a user gives on the command line (``vendor --package``, ``init --package``):
checked before anything is written, and made from a folder's name where none is given."""

from __future__ import annotations

import keyword
import re
import unicodedata

from acpgen.errors import AcpgenError, Problem

_NOT_WORD = re.compile(r"[^0-9A-Za-z_]+")


def why_not_importable(name: str) -> str | None:
    """Why ``name`` cannot be imported as a dotted package name (``myapp._acp``), or None."""
    parts = name.split(".")
    if not name or any(not part for part in parts):
        return f"{name!r} is not a dotted Python import name"
    for part in parts:
        if keyword.iskeyword(part):
            return f"{part!r} is a Python keyword, which no import statement can name"
        if not part.isidentifier() or not part.isascii():
            return f"{part!r} is not a Python identifier (letters, digits and _, not starting with a digit)"
    return None


def refuse_unimportable(name: str | None, option: str, example: str) -> str:
    """``name``, if a package can be imported by it; else an :class:`AcpgenError` naming ``option``."""
    if name is None:
        raise AcpgenError(
            Problem(
                what=f"{option} is required: the name your code imports the package by",
                where=option,
                hint=f"Give it, e.g. {option} {example}.",
            )
        )
    why = why_not_importable(name)
    if why is not None:
        raise AcpgenError(
            Problem(
                what=f"{option} {name}: {why}",
                where=option,
                hint=f"Give a dotted Python import name, e.g. {option} {example}.",
            )
        )
    return name


def identifier_from(text: str) -> str:
    """``text`` (a folder's name) made a Python identifier, as ``uv init`` and ``cargo new`` make
    a package name of a folder's: accents dropped, lower case, every run of other characters one
    ``_``; a leading digit or a keyword gets a ``_`` (``My Agent-2`` -> ``my_agent_2``)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    name = _NOT_WORD.sub("_", plain.lower()).strip("_") or "agent"
    if name[0].isdigit():
        name = f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name
