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
its client spawned.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..wire.codec import head
from .transport import Oversized

__all__ = ["LineSplitter", "LineTransport", "Reader", "split_lines", "stdio_streams"]

_CHUNK = 64 * 1024


class Reader(Protocol):
    """What the splitter reads from: an ``asyncio.StreamReader``, or anything with its
    ``read`` (an empty chunk: the end)."""

    async def read(self, n: int = -1) -> bytes: ...


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over this process's stdin and stdout, for an agent its client spawned."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class LineSplitter:
    """Splits chunks of input into lines, one line per call, in time linear in the
    input whatever the chunk boundaries; never holds more than the limit of one line
    beyond the chunk it was given (a longer line is skipped, reported by its head).

    Call :meth:`next` until it returns None, then :meth:`add` the next chunk; at the
    end of the input, :meth:`end` gives what is left.
    """

    __slots__ = ("_chunk", "_first", "_limit", "_pieces", "_size", "_start")

    def __init__(self, limit: int) -> None:
        self._limit = limit
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
                if len(piece) <= self._limit:
                    return piece
                return Oversized(head((piece,)))
            line: bytes | Oversized
            if first is None and self._size + len(piece) <= self._limit:
                line = b"".join((*pieces, piece))
            else:
                line = Oversized(first if first is not None else head((*pieces, piece)))
            self._pieces, self._size, self._first = [], 0, None
            return line
        if self._first is None and start < len(chunk):
            self._pieces.append(chunk[start:] if start else chunk)
            self._size += len(chunk) - start
            if self._size > self._limit:
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
        if size > self._limit:
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
    """Newline-delimited JSON over a stream reader and writer (a pipe, a socket)."""

    def __init__(self, reader: Reader, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        """An ``asyncio.StreamWriter``, or anything with its ``write``, ``drain``,
        ``close`` and ``wait_closed``."""
        self._splitter: LineSplitter | None = None
        self._ended = False
        self._stream: Any = getattr(writer, "transport", None)
        """The writer's asyncio transport, if it has one: asked whether anything waits
        to be written."""

    async def receive(self, limit: int) -> bytes | Oversized | None:
        splitter = self._splitter
        if splitter is None:
            splitter = self._splitter = LineSplitter(limit)
        while (line := splitter.next()) is None:  # lines already read go first
            if self._ended:
                return None
            chunk = await self._reader.read(_CHUNK)
            if not chunk:
                self._ended = True
                return splitter.end()
            splitter.add(chunk)
        return line

    def received(self) -> bytes | Oversized | None:
        """The next line when it is already read (left in the chunk read), without
        awaiting; None: await :meth:`receive`."""
        splitter = self._splitter
        return splitter.next() if splitter is not None else None

    async def ready(self) -> None:
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
        self._writer.write(data + b"\n")

    def send_now(self, data: bytes) -> None:
        """:meth:`send`, without awaiting."""
        self._writer.write(data + b"\n")

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
