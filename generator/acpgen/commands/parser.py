"""The command line's parser and entry point: ``acpgen init``, ``acpgen generate``, ``acpgen schema fetch``,
``acpgen schema bump``, ``acpgen diff``, ``acpgen vendor``, ``acpgen features``, and the tools
(``acpgen conformance``, ``acpgen trace``, ``acpgen relay``).

Each command registers its own subparser and sets ``run(args, settings) -> exit code``; this
module reads the settings, runs the command, and turns the problems it raises into messages.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from acpgen.commands import bump, diff, features, generate, init, schema_fetch, tools, vendor
from acpgen.errors import EXIT_BAD_INPUT, AcpgenError
from acpgen.render.header import generator_version
from acpgen.source.config import load_settings


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``acpgen`` console script (and of ``python -m acpgen``)."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        if words[:1] and words[0] in tools.TOOLS:  # the rest is the tool's own command line
            return tools.run_tool(words[0], words[1:])
        args = parser().parse_args(words)
        settings = load_settings(Path(args.config))
        return int(args.run(args, settings))
    except AcpgenError as error:
        for problem in error.problems:
            print(f"acpgen: error: {problem.message()}", file=sys.stderr)
        return EXIT_BAD_INPUT


def parser() -> argparse.ArgumentParser:
    """The command line's parser, each command's part added by the command's module."""
    top = argparse.ArgumentParser(prog="acpgen", description="Typed Python bindings for the Agent Client Protocol.")
    top.add_argument("--config", default="pyproject.toml", help="pyproject.toml holding [tool.acpgen]")
    top.add_argument("--version", action="version", version=f"acpgen {generator_version()}")
    commands = top.add_subparsers(required=True, metavar="COMMAND")
    generate.register(commands)
    schema = commands.add_parser("schema", help="manage the pinned schema")
    actions = schema.add_subparsers(required=True, metavar="ACTION")
    schema_fetch.register(actions)
    bump.register(actions)
    for command in (init, diff, vendor, features, tools):
        command.register(commands)
    return top
