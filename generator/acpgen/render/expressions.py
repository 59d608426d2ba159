"""Python expressions of the models module, as values: the generator decides them, never pastes them.

Reading rules (``DefaultOnError([])``), default factories and routed union annotations are built
as :class:`Call`, :class:`Name`, :class:`Lambda` and :class:`Annotated` values whose parts are
checked identifiers and Python literals; their text is written only when a template prints them
(``str``), literals through ``repr``.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any


def _identifier(text: str) -> str:
    """A dotted name, every part a Python identifier that is not a keyword."""
    parts = text.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        raise ValueError(f"not a Python name: {text!r}")
    return text


@dataclass(frozen=True, slots=True)
class Name:
    """A name the models module defines or imports (``OmitNone``, ``Plan.model_validate``)."""

    text: str

    def __post_init__(self) -> None:
        _identifier(self.text)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Call:
    """``function(*args, **keywords)``; each argument an expression or a literal."""

    function: str
    args: tuple[Any, ...] = ()
    keywords: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        _identifier(self.function)
        for name, _ in self.keywords:
            _identifier(name)

    def __str__(self) -> str:
        arguments = [source(a) for a in self.args] + [f"{k}={source(v)}" for k, v in self.keywords]
        return f"{self.function}({', '.join(arguments)})"


@dataclass(frozen=True, slots=True)
class Lambda:
    """``lambda: body``."""

    body: Any

    def __str__(self) -> str:
        return f"lambda: {source(self.body)}"


@dataclass(frozen=True, slots=True)
class Annotated:
    """``Annotated[A | B | ..., metadata...]``: a union of members with metadata."""

    members: tuple[Any, ...]
    metadata: tuple[Any, ...]

    def __str__(self) -> str:
        union = " | ".join(source(m) for m in self.members)
        return f"Annotated[{', '.join([union, *(source(m) for m in self.metadata)])}]"


EXPRESSIONS = (Name, Call, Lambda, Annotated)


def source(value: Any) -> str:
    """The Python text of an expression, or of a literal (through ``repr``)."""
    if isinstance(value, EXPRESSIONS):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(source(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(source(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source(k)}: {source(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Python literal for {value!r}")


def names(value: Any) -> set[str]:
    """The top-level names an expression uses (what the models module must import)."""
    if isinstance(value, Name):
        return {value.text.split(".")[0]}
    if isinstance(value, Call):
        found = {value.function.split(".")[0]}
        for part in (*value.args, *(v for _, v in value.keywords)):
            found |= names(part)
        return found
    if isinstance(value, Lambda):
        return names(value.body)
    if isinstance(value, Annotated):
        return set().union(*(names(p) for p in (*value.members, *value.metadata)))
    return set()
