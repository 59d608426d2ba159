"""Start a peer process with its stdin and stdout as the connection, and stop it
cleanly, with every process it started.

An agent is often started through a launcher (an npm bin shim, ``npx``, ``uvx``, a
shell script) whose child is the real agent. The peer therefore runs in a process
group of its own (a new session on POSIX, a new process group on Windows), and
stopping it signals that whole group, so that no child outlives the connection.

Support code: it knows no method of the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from .lines import pipe_streams

__all__ = ["AgentStartError", "spawn", "stop"]

_POLL = 0.05
"""Seconds between two looks at whether the process group has ended."""
_KILL = 9 if sys.platform == "win32" else signal.SIGKILL
"""The last signal sent (Windows has none: ``taskkill /F`` ends the tree there)."""


class AgentStartError(ConnectionError):
    """The peer's command could not be started (not found, not executable, ...)."""


async def spawn(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: int | IO[Any] | None = None,
) -> tuple[asyncio.subprocess.Process, asyncio.StreamReader, asyncio.StreamWriter]:
    """Start ``command`` (an argument list) in a process group of its own; its stdout
    to read from, its stdin to write to (pipes, on every loop: the process's ``stdin``
    and ``stdout`` attributes are None on POSIX, these streams are its pipes).

    ``stderr`` is inherited unless given (``asyncio.subprocess.DEVNULL`` to silence it).
    Raises :class:`AgentStartError` when the command cannot be started.
    """
    if isinstance(command, str | bytes) or not command:
        raise ValueError(
            "command is a non-empty list of arguments, e.g. ['my-agent', '--stdio']"
        )
    if sys.platform == "win32":  # asyncio's pipes: the loop's own kind there
        return await _spawn_with_asyncio_pipes(command, cwd, env, stderr)
    # Pipes of our own: uvloop's subprocess pipes are Unix sockets, which cost the
    # kernel about twice a pipe's time per message.
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    try:
        try:
            process = await _exec(command, cwd, env, child_stdin, child_stdout, stderr)
        finally:
            os.close(child_stdin)  # the child holds its ends now
            os.close(child_stdout)
    except BaseException:
        os.close(to_child)
        os.close(from_child)
        raise
    try:
        reader, writer = await pipe_streams(*_files(from_child, to_child))
    except BaseException:  # (cancelled): the agent sees its input end, and is ended
        _signal(process, _KILL)
        raise
    return process, reader, writer


def _files(read_fd: int, write_fd: int) -> tuple[IO[bytes], IO[bytes]]:
    """The file objects of our ends of the agent's pipes (unbuffered: the streams read
    and write the descriptors; they close them)."""
    return open(read_fd, "rb", buffering=0), open(write_fd, "wb", buffering=0)


async def _spawn_with_asyncio_pipes(
    command: Sequence[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    stderr: int | IO[Any] | None,
) -> tuple[asyncio.subprocess.Process, asyncio.StreamReader, asyncio.StreamWriter]:
    process = await _exec(
        command, cwd, env, asyncio.subprocess.PIPE, asyncio.subprocess.PIPE, stderr
    )
    assert process.stdout is not None and process.stdin is not None
    return process, process.stdout, process.stdin


async def _exec(
    command: Sequence[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    stdin: int,
    stdout: int,
    stderr: int | IO[Any] | None,
) -> asyncio.subprocess.Process:
    """Start ``command`` in a process group of its own; :class:`AgentStartError` when
    it cannot be started."""
    try:
        return await asyncio.create_subprocess_exec(
            *command,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            **_own_group(),
        )
    except OSError as error:
        reason = error.strerror or str(error)
        raise AgentStartError(
            f"cannot start the agent {list(command)!r}: {reason}"
            + (f" ({error.filename})" if error.filename else "")
        ) from error


def _own_group() -> dict[str, Any]:
    """The keyword arguments that start a process in a process group of its own."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


async def stop(process: asyncio.subprocess.Process, grace: float = 5.0) -> int:
    """Wait for a process whose stdin was closed to exit, with every process of its
    group; then terminate the group, then kill it, each after ``grace`` seconds.

    Returns the exit code of the process itself. A child that left the group may hold
    the pipes open: they are waited for at most a second more, so that this returns
    within ``3 * grace + 1`` seconds whatever the processes do.
    """
    for ending in (None, signal.SIGTERM, _KILL):
        if ending is not None:
            _signal(process, ending)
        if await _ended(process, grace):
            break
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), min(grace, 1.0))  # pipes closed too
    return process.returncode if process.returncode is not None else -_KILL


async def _ended(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether, within ``timeout`` seconds, the process exited and no other process of
    its group is left running."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if process.returncode is not None and not _group_alive(process):
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(_POLL)


def _signal(process: asyncio.subprocess.Process, signum: int) -> None:
    """Send ``signum`` to the process's whole group (on Windows: end its tree)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(process.pid)],
                capture_output=True,
                check=False,
            )
            if process.returncode is None:
                process.kill()
        else:
            os.killpg(process.pid, signum)


def _group_alive(process: asyncio.subprocess.Process) -> bool:
    """Whether a process of the group the process leads is still running (zombies,
    which a container's init may never reap, do not count)."""
    if sys.platform == "win32":
        return False  # no process groups to look at: the process itself decides
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return any(_running_member(entry, process.pid) for entry in proc.iterdir())


def _running_member(entry: Path, group: int) -> bool:
    """Whether ``/proc/<pid>`` is a running (not zombie) process of ``group``."""
    if not entry.name.isdigit():
        return False
    try:
        stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()  # after "pid (name)": state ppid pgrp
    return len(fields) > 2 and fields[0] != "Z" and fields[2] == str(group)
