"""The command line's options (``--help`` lists them)."""

from __future__ import annotations

import argparse
from typing import Any

from .scenario import DEFAULT_CANCEL_PROMPT

OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (
        ("side",),
        {
            "choices": ("agent", "client", "trace"),
            "help": "what to check: an agent, a client (with the probe agent), a trace",
        },
    ),
    (("trace",), {"nargs": "?", "help": "with trace: the trace file (JSON lines)"}),
    (
        ("--agent-capabilities",),
        {
            "default": "{}",
            "metavar": "JSON",
            "help": "client: what the probe agent advertises (default: nothing)",
        },
    ),
    (
        ("--no-version-mismatch",),
        {
            "action": "store_true",
            "help": "client: skip the second run, where the probe answers initialize "
            "with a version the client does not speak (ACP-CLIENT-INIT-005 is then "
            "NOT_TESTED)",
        },
    ),
    (
        ("--serve",),
        {
            "action": "store_true",
            "help": "client: serve the probe agent over the network (Streamable HTTP "
            "and WebSocket, by the relay) for a client of remote agents; {url} in its "
            "command (and ACP_CONFORMANCE_URL) is the address",
        },
    ),
    (
        ("--url",),
        {"help": "check the remote agent at this address instead of a command"},
    ),
    (
        ("--transport",),
        {
            "choices": ("http", "ws"),
            "default": "http",
            "help": "with --url: Streamable HTTP (default) or a WebSocket",
        },
    ),
    (
        ("--timeout",),
        {
            "type": float,
            "default": 30.0,
            "help": "seconds to wait for each answer (default 30)",
        },
    ),
    (
        ("--startup-timeout",),
        {
            "type": float,
            "default": 30.0,
            "help": "seconds to wait for the first answer (default 30)",
        },
    ),
    (
        ("--scenario-timeout",),
        {
            "type": float,
            "default": 120.0,
            "help": "seconds a scenario may run (default 120)",
        },
    ),
    (
        ("--jobs",),
        {
            "type": int,
            "default": 4,
            "help": "agent: scenarios run side by side after initialize, each with "
            "its own agent process (default 4; 1: one at a time)",
        },
    ),
    (
        ("--close-grace",),
        {
            "type": float,
            "default": 2.0,
            "help": "seconds the agent has to exit after its stdin closes (default 2)",
        },
    ),
    (
        ("--cancel-prompt",),
        {
            "default": DEFAULT_CANCEL_PROMPT,
            "help": "the prompt of the turns the kit cancels (and closes): one that "
            "keeps the agent busy for a moment (default: a long essay)",
        },
    ),
    (
        ("--auth-method",),
        {"help": "authenticate with this method id after every initialize"},
    ),
    (
        ("--agent-env",),
        {
            "action": "append",
            "default": [],
            "metavar": "KEY=VALUE",
            "help": "set in the agent's environment (repeatable)",
        },
    ),
    (("--agent-cwd",), {"help": "the folder the agent runs in"}),
    (
        ("-k",),
        {
            "action": "append",
            "metavar": "WORD",
            "help": "run only the scenarios whose name, or the id of a requirement "
            "they judge, contains WORD (repeatable; `initialize` always runs)",
        },
    ),
    (("--report-json",), {"metavar": "PATH", "help": "write the JSON report there"}),
    (("--junit",), {"metavar": "PATH", "help": "write JUnit XML there"}),
    (
        ("-v", "--verbose"),
        {
            "action": "store_true",
            "help": "list every requirement judged, passed ones too, with its evidence",
        },
    ),
)
"""Each option's names and its ``add_argument`` settings, in ``--help``'s order."""


def parser(prog: str) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog=prog,
        description="Check an ACP agent, client or recorded trace against the protocol "
        "of this build's schema.",
    )
    for names, settings in OPTIONS:
        made.add_argument(*names, **settings)
    return made
