"""Start a peer process with its stdin and stdout as the connection, and stop it
cleanly.

Support code: it knows no method of the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import IO, Any

__all__ = ["spawn", "stop"]


async def spawn(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: int | IO[Any] | None = None,
) -> tuple[asyncio.subprocess.Process, asyncio.StreamReader, asyncio.StreamWriter]:
    """Start ``command`` (an argument list); its stdout to read from, its stdin to write
    to.

    ``stderr`` is inherited unless given (``asyncio.subprocess.DEVNULL`` to silence it).
    """
    if isinstance(command, str | bytes) or not command:
        raise ValueError(
            "command is a non-empty list of arguments, e.g. ['my-agent', '--stdio']"
        )
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env=dict(env) if env is not None else None,
    )
    assert process.stdout is not None and process.stdin is not None
    return process, process.stdout, process.stdin


async def stop(process: asyncio.subprocess.Process, grace: float = 5.0) -> int:
    """Wait for a process whose stdin was closed to exit; terminate it, then kill it, if
    it lingers.

    Returns its exit code.
    """
    for ending in (None, process.terminate, process.kill):
        if ending is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                ending()
        try:
            return await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            continue
    return await process.wait()
