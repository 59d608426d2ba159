"""Messages as lines: the one line splitter, and the stdio transport.

Support code: it knows no method of the protocol. :func:`split_lines` splits what a
reader gives into lines in time linear in the input, whatever the chunk boundaries, and
never holds more than the limit of one line (a longer line is skipped and reported by
its head, so that it can be refused by its id); stdio reads its messages with it, and
the remote client the lines of its server-sent event streams. :class:`LineTransport`
writes each message as one line, waiting first while the peer does not read (at most
one message beyond the stream's buffer limit is held). :func:`stdio_streams` gives this
process's own stdin and stdout as streams, for an agent its client spawned.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..wire.codec import head
from .transport import Oversized

__all__ = ["LineTransport", "Reader", "split_lines", "stdio_streams"]

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


async def split_lines(reader: Reader, limit: int) -> AsyncIterator[bytes | Oversized]:
    """The reader's lines (without the line break), blank lines skipped at the end
    only; a line longer than ``limit`` as :class:`~.transport.Oversized`."""
    pieces: list[bytes] = []
    size = 0
    first: bytes | None = None  # set while skipping the rest of an over-long line
    while chunk := await reader.read(_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:end]
            if first is None and size + len(piece) <= limit:
                yield b"".join((*pieces, piece)) if pieces else piece
            else:
                yield Oversized(first if first is not None else head((*pieces, piece)))
            pieces, size, first, start = [], 0, None, end + 1
        if first is None and start < len(chunk):
            pieces.append(chunk[start:] if start else chunk)
            size += len(chunk) - start
            if size > limit:
                first, pieces, size = head(pieces), [], 0
    if first is not None or size > limit:
        yield Oversized(first if first is not None else head(pieces))
    elif pieces and (rest := b"".join(pieces)).strip():
        yield rest


class LineTransport:
    """Newline-delimited JSON over a stream reader and writer (a pipe, a socket)."""

    def __init__(self, reader: Reader, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        """An ``asyncio.StreamWriter``, or anything with its ``write``, ``drain``,
        ``close`` and ``wait_closed``."""
        self._lines: AsyncIterator[bytes | Oversized] | None = None

    async def receive(self, limit: int) -> bytes | Oversized | None:
        if self._lines is None:
            self._lines = split_lines(self._reader, limit)
        return await anext(self._lines, None)

    async def ready(self) -> None:
        await self._writer.drain()

    async def send(self, data: bytes) -> None:
        self._writer.write(data + b"\n")

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
