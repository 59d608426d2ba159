"""Errors as values: what went wrong, where (a JSON pointer), and what to do about it.

Every stage reports problems as :class:`Problem` values and raises :class:`AcpgenError`
holding one or more of them; only the CLI turns them into text and an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_STALE = 1
EXIT_BAD_INPUT = 2


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem with an input: what is wrong, where, and how to fix it."""

    what: str
    where: str
    """A JSON pointer (``/$defs/Foo/properties/bar``) or a file path, optionally both as ``file#pointer``."""
    hint: str

    def message(self) -> str:
        """One paragraph, readable in a terminal."""
        return f"{self.what} (at {self.where or '/'}). {self.hint}"


class AcpgenError(Exception):
    """A failure caused by the input, reported to the user with exit code 2."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__("\n".join(p.message() for p in problems))
        self.problems: tuple[Problem, ...] = problems


def pointer(*parts: str | int) -> str:
    """Build a JSON pointer (RFC 6901) from raw path segments."""
    if not parts:
        return ""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
