"""The event loop a program's ``main`` runs on: uvloop when installed, else asyncio's.

Support code: it knows no method of the protocol. The loop is chosen where it is
created, which is the program's ``main`` (``asyncio.run``), not a library function that
runs on a loop already running (``run_agent``, ``spawn_agent``, ``connect_agent``).
:func:`run` is ``asyncio.run`` with that choice made: the generated ``serve.run``, which
the examples and an agent's ``main`` call. uvloop is optional (acpgen's ``fast`` extra,
POSIX only): without it, or with ``ACP_LOOP=asyncio`` (or ``loop="asyncio"``), the
program runs on asyncio's own loop, with the same behaviour and guarantees.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar, cast

__all__ = ["ENVIRONMENT", "REQUIREMENT", "chosen_loop", "loop_factory", "run"]

ENVIRONMENT = "ACP_LOOP"
"""The environment variable that chooses the loop: ``auto`` (the default: uvloop when
installed), ``uvloop`` (required) or ``asyncio``."""

REQUIREMENT = "uvloop==0.23.0"
"""The uvloop version tested (acpgen's ``fast`` extra); newer ones work too."""

_CHOICES = ("auto", "uvloop", "asyncio")

T = TypeVar("T")


class Uvloop(Protocol):
    """What the runtime uses of uvloop (typed here: a type checker of a project without
    uvloop accepts its absence)."""

    def new_event_loop(self) -> asyncio.AbstractEventLoop: ...


def uvloop_module() -> Uvloop | None:
    """uvloop when it can be imported, else None."""
    try:
        found = importlib.import_module("uvloop")
    except ImportError:
        return None
    return cast(Uvloop, found)


def chosen_loop(loop: str | None = None) -> str:
    """``"uvloop"`` or ``"asyncio"``: what ``loop`` (else ``ACP_LOOP``, else ``auto``)
    chooses on this machine.

    Raises ``ValueError`` for a choice that is none of ``auto``, ``uvloop`` and
    ``asyncio``, and ``ImportError`` (naming the package to install) when ``uvloop``
    is required and not installed.
    """
    source = "loop" if loop is not None else ENVIRONMENT
    choice = loop if loop is not None else os.environ.get(ENVIRONMENT, "") or "auto"
    if choice not in _CHOICES:
        raise ValueError(f"{source} is 'auto', 'uvloop' or 'asyncio', not {choice!r}")
    if choice == "asyncio":
        return "asyncio"
    if uvloop_module() is None:
        if choice == "uvloop":
            raise ImportError(
                f"{source}='uvloop' needs uvloop, which is not installed: "
                f"pip install '{REQUIREMENT}' (POSIX only), or choose 'asyncio'"
            )
        return "asyncio"
    return "uvloop"


def loop_factory(loop: str | None = None) -> Callable[[], asyncio.AbstractEventLoop]:
    """What creates the loop :func:`chosen_loop` chooses (for ``asyncio.Runner``)."""
    uvloop = uvloop_module() if chosen_loop(loop) == "uvloop" else None
    return asyncio.new_event_loop if uvloop is None else uvloop.new_event_loop


def run(
    main: Coroutine[Any, Any, T],
    *,
    loop: str | None = None,
    debug: bool | None = None,
) -> T:
    """Run ``main`` to its end on a new event loop and close it, as ``asyncio.run``
    does: uvloop's when installed, unless ``loop`` (or ``ACP_LOOP``) says ``asyncio``.

    ``run(run_agent(MyAgent()))`` is a whole agent's ``main``; ``run(main())`` a
    client's.
    """
    try:
        factory = loop_factory(loop)
    except BaseException:
        main.close()  # never awaited: no warning about it
        raise
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(main)
