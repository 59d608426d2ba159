"""``acpgen conformance``, ``acpgen trace`` and ``acpgen relay``: the tools, run from acpgen.

Each runs the tool of a package built from the pinned schema with the build it is told
(``--unstable``, ``--unstable-feature NAME``, ``--protocol N``, given before the tool's own
arguments; default: the stable build of protocol 1), rendered once into acpgen's cache
(:mod:`acpgen.output.tool_builds`). Everything else on the command line is the tool's: ``acpgen
conformance agent -- python my_agent.py`` is the kit's ``agent -- python my_agent.py``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from acpgen.errors import AcpgenError, Problem
from acpgen.source.config import Settings

TOOLS = {
    "conformance": "check an agent, a client or a recorded trace against the protocol (the conformance kit)",
    "trace": "show a trace (the JSON lines written with trace= or ACP_TRACE) as text, HTML or JSON",
    "relay": "serve any stdio agent over Streamable HTTP and WebSocket (needs uvicorn)",
}


def register(commands: Any) -> None:
    """Add one subcommand per tool to the CLI's subparsers."""
    for name, text in TOOLS.items():
        parser = commands.add_parser(
            name,
            help=text,
            add_help=False,
            description=f"{text}. Build options, before the tool's own: --unstable, --unstable-feature NAME "
            "(repeatable), --protocol N. `acpgen " + name + " --help` lists the tool's options.",
        )
        parser.add_argument("words", nargs=argparse.REMAINDER)
        parser.set_defaults(run=_runner(name))


def _runner(name: str) -> Any:
    def run(args: argparse.Namespace, _settings: Settings) -> int:
        return run_tool(name, args.words)

    return run


def run_tool(name: str, words: Sequence[str]) -> int:
    """Run tool ``name`` with ``words``: the build options taken out, the rest handed to the tool."""
    from acpgen.output.tool_builds import tool_package

    build, rest = split_build_options(words)
    package = tool_package(build)
    module = __import__(f"{package.__name__}.{name}", fromlist=["main"])
    return int(module.main(rest, prog=f"acpgen {name}"))


def split_build_options(words: Sequence[str]) -> tuple[Any, list[str]]:
    """The build named by ``words`` (before a ``--``), and the words left for the tool."""
    from acpgen.output.tool_builds import ToolBuild

    words = list(words)
    end = words.index("--") if "--" in words else len(words)
    head, tail = words[:end], words[end:]
    rest: list[str] = []
    unstable = False
    features: list[str] = []
    protocol: int | None = None
    items = iter(head)
    for word in items:
        option, eq, inline = word.partition("=")
        if option == "--unstable" and not eq:
            unstable = True
        elif option in ("--unstable-feature", "--protocol"):
            value = inline if eq else next(items, None)
            if value is None:
                raise AcpgenError(Problem(what=f"{option} needs a value", where=option, hint=f"{option} VALUE"))
            if option == "--protocol":
                protocol = _protocol(value)
            else:
                features.append(value)
        else:
            rest.append(word)
    if unstable and features:
        raise AcpgenError(
            Problem(
                what="--unstable and --unstable-feature name two builds",
                where="--unstable",
                hint="Give one: --unstable (everything) or --unstable-feature NAME (the stable protocol plus NAME).",
            )
        )
    build = ToolBuild(
        "unstable" if unstable or features else "stable",
        tuple(features) if features else None,
        protocol if protocol != 1 else None,
    )
    return build, rest + tail


def _protocol(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise AcpgenError(
            Problem(what=f"--protocol wants a number, not {value!r}", where="--protocol", hint="--protocol 2")
        ) from None
