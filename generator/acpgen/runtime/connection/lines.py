"""Messages as lines: the one line splitter, and the stdio transport.

Support code: it knows no method of the protocol. :class:`LineSplitter` splits what a
reader gives into lines in time linear in the input, whatever the chunk boundaries, and
never holds more than the limit of one line (a longer line is skipped and reported by
its head, so that it can be refused by its id); stdio reads its messages with it, one
line per call and without a task switch while lines are left in the chunk read, and
the remote client the lines of its server-sent event streams (:func:`split_lines`).
:class:`LineTransport` writes each message as one line, waiting first while the peer
does not read (at most one message beyond the stream's buffer limit is held).
:func:`stdio_streams` gives this process's own stdin and stdout as streams, for an agent
its client spawned; :func:`pipe_streams` any pair of pipes (the client's ends of a
spawned agent's stdin and stdout).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from typing import IO, Any, Protocol

from ..wire.codec import head
from .transport import Oversized

__all__ = [
    "LineSplitter",
    "LineTransport",
    "Reader",
    "pipe_streams",
    "split_lines",
    "stdio_streams",
]

_CHUNK = 64 * 1024


class Reader(Protocol):
    """What the splitter reads from: an ``asyncio.StreamReader``, or anything with its
    ``read`` (an empty chunk: the end)."""

    async def read(self, n: int = -1) -> bytes: ...


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over this process's stdin and stdout, for an agent its client spawned."""
    return await pipe_streams(sys.stdin, sys.stdout)


async def pipe_streams(
    read_end: IO[Any], write_end: IO[Any]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A reader of ``read_end`` and a writer to ``write_end`` (pipes, or files the loop
    can watch as pipes), connected to the running loop, which closes them with the
    streams. The writer's ``wait_closed`` waits until its pipe is closed."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: _ReadPipeProtocol(reader), read_end)
    # a reader's protocol on the writing end too: the one whose close can be awaited
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), write_end
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class _ReadPipeProtocol(asyncio.StreamReaderProtocol):
    """A reading pipe's protocol whose transport closes at the end of the input, as
    asyncio's pipes do on every loop (uvloop keeps a pipe open when the protocol asks
    to, as ``StreamReaderProtocol`` does for a socket's half-close)."""

    def eof_received(self) -> bool:
        super().eof_received()
        return False


class LineSplitter:
    """Splits chunks of input into lines, one line per call, in time linear in the
    input whatever the chunk boundaries; never holds more than the limit of one line
    beyond the chunk it was given (a longer line is skipped, reported by its head).

    Call :meth:`next` until it returns None, then :meth:`add` the next chunk; at the
    end of the input, :meth:`end` gives what is left.
    """

    __slots__ = ("_chunk", "_first", "_pieces", "_size", "_start", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """The longest line kept, in bytes."""
        self._chunk = b""
        self._start = 0
        self._pieces: list[bytes] = []
        """The start of an unfinished line, as it came."""
        self._size = 0
        self._first: bytes | None = None
        """Set while skipping the rest of an over-long line: its head."""

    def add(self, chunk: bytes) -> None:
        """The next chunk of input (once :meth:`next` has returned None)."""
        self._chunk, self._start = chunk, 0

    def next(self) -> bytes | Oversized | None:
        """The next whole line (without its line break), :class:`~.transport.Oversized`
        for one longer than the limit; None when the chunk holds no more."""
        chunk, start = self._chunk, self._start
        end = chunk.find(b"\n", start)
        if end >= 0:
            self._start = end + 1
            piece = chunk[start:end]
            pieces, first = self._pieces, self._first
            if not pieces and first is None:  # the common case: a line within a chunk
                if len(piece) <= self.limit:
                    return piece
                return Oversized(head((piece,)))
            line: bytes | Oversized
            if first is None and self._size + len(piece) <= self.limit:
                line = b"".join((*pieces, piece))
            else:
                line = Oversized(first if first is not None else head((*pieces, piece)))
            self._pieces, self._size, self._first = [], 0, None
            return line
        if self._first is None and start < len(chunk):
            self._pieces.append(chunk[start:] if start else chunk)
            self._size += len(chunk) - start
            if self._size > self.limit:
                self._first, self._pieces, self._size = head(self._pieces), [], 0
        self._chunk, self._start = b"", 0
        return None

    def end(self) -> bytes | Oversized | None:
        """At the end of the input: the last line if it lacks its line break (None when
        it is blank or there is none)."""
        first, pieces, size = self._first, self._pieces, self._size
        self._pieces, self._size, self._first = [], 0, None
        if first is not None:
            return Oversized(first)
        if size > self.limit:
            return Oversized(head(pieces))
        if pieces and (rest := b"".join(pieces)).strip():
            return rest
        return None


async def split_lines(reader: Reader, limit: int) -> AsyncIterator[bytes | Oversized]:
    """The reader's lines (without the line break), blank lines skipped at the end
    only; a line longer than ``limit`` as :class:`~.transport.Oversized`."""
    splitter = LineSplitter(limit)
    while True:
        line = splitter.next()
        if line is not None:
            yield line
        elif chunk := await reader.read(_CHUNK):
            splitter.add(chunk)
        else:
            break
    rest = splitter.end()
    if rest is not None:
        yield rest


class LineTransport:
    """Newline-delimited JSON over a stream reader and writer (a pipe, a socket).

    Messages written without awaiting (:meth:`send_now`) in one turn of the event loop
    (the answers to a batch of requests read together) go out in groups: the first at
    once, then every ``GROUP`` messages, and what is left when the turn ends; one
    system call per group, not per message, while the peer already reads the first.
    A group holds at most ``GROUP`` messages and ``GROUP_BYTES`` bytes; whenever a
    writer must wait (:meth:`ready`, :meth:`send`) and at :meth:`close`, the group is
    written first, so that the order is kept.
    """

    GROUP = 8
    """The most messages written in one piece (more per group keeps the peer waiting
    longer for the first of them; fewer costs more system calls)."""
    GROUP_BYTES = 64 * 1024
    """The most bytes held in a group before it is written."""

    telemetry_name = "stdio"
    """``acp.transport`` (``telemetry``)."""

    def __init__(self, reader: Reader, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        """An ``asyncio.StreamWriter``, or anything with its ``write``, ``drain``,
        ``close`` and ``wait_closed``."""
        self._splitter = LineSplitter(0)
        """Its limit is the one :meth:`receive` is given (before that it holds
        nothing)."""
        self.received: Callable[[], bytes | Oversized | None] = self._splitter.next
        """The next line when it is already read (left in the chunk read), without
        awaiting; None: await :meth:`receive` (the splitter's own method: no call more
        per message)."""
        self._ended = False
        self._stream: Any = getattr(writer, "transport", None)
        """The writer's asyncio transport, if it has one: asked whether anything waits
        to be written."""
        self._group: list[bytes] | None = None
        """The messages gathered in this turn of the loop since the last write (None: no
        message was written in this turn yet)."""
        self._group_bytes = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def receive(self, limit: int) -> bytes | Oversized | None:
        splitter = self._splitter
        splitter.limit = limit
        while (line := splitter.next()) is None:  # lines already read go first
            if self._ended:
                return None
            chunk = await self._reader.read(_CHUNK)
            if not chunk:
                self._ended = True
                return splitter.end()
            splitter.add(chunk)
        return line

    async def ready(self) -> None:
        self._write_group()
        if self.can_send_now():
            return  # nothing waits to be written: no need to ask the stream
        await self._writer.drain()

    def can_send_now(self) -> bool:
        """Whether :meth:`ready` would return at once: nothing waits in the stream's
        buffer (the connection then writes with :meth:`send_now`, without awaiting)."""
        transport = self._stream
        return (
            transport is not None
            and not transport.is_closing()
            and not transport.get_write_buffer_size()
        )

    async def send(self, data: bytes) -> None:
        self._write_group()
        self._writer.write(data + b"\n")

    def send_now(self, data: bytes) -> None:
        """:meth:`send`, without awaiting: the first message of a turn of the loop at
        once, those after it in groups (written when full, and when the turn ends)."""
        group = self._group
        if group is None:  # the turn's first message
            self._writer.write(data + b"\n")
            self._group = []
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self._end_turn)
            return
        group.append(data)
        self._group_bytes += len(data)
        if len(group) >= self.GROUP or self._group_bytes >= self.GROUP_BYTES:
            self._write_group()

    def _write_group(self) -> None:
        """Write the messages gathered so far, in one piece."""
        group = self._group
        if group:
            group.append(b"")
            data = b"\n".join(group)
            group.clear()  # (before writing: a writer that raises leaves nothing held)
            self._group_bytes = 0
            self._writer.write(data)

    def _end_turn(self) -> None:
        try:
            self._write_group()
        except (RuntimeError, OSError):
            pass  # the stream closed in this turn: the connection learns it as it reads
        finally:
            self._group = None
            self._group_bytes = 0

    async def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):  # the stream may be closed
            self._write_group()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
