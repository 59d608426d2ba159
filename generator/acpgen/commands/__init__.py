"""The commands of the ``acpgen`` command line, one module each (``generate``, ``schema_fetch``,
``bump``, ``diff``, ``vendor``, ``features``), and the parser that dispatches to them
(:mod:`acpgen.commands.parser`): the only place where a :class:`~acpgen.errors.Problem` becomes a
message and an exit code."""

from acpgen.commands.parser import main

__all__ = ["main"]
