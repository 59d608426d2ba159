"""stdio's writes in groups (issue 33): ``LineTransport`` writes the first message of a turn of the
event loop at once and those after it in groups of at most ``GROUP`` messages and ``GROUP_BYTES``
bytes, what is left when the turn ends. Over a real pipe, on either loop: the peer reads every
message whole and in order, the first before the turn ends; no more than a group ever waits; a
write that must wait (``ready`` then ``send``) and ``close`` write what waits first; a turn that
ends on a closed pipe is quiet."""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from typing import Any

import pytest

from acpgen.runtime.connection.lines import LineTransport, pipe_streams

LOOPS = [
    "asyncio",
    pytest.param("uvloop", marks=pytest.mark.skipif(find_spec("uvloop") is None, reason="uvloop is not installed")),
]
GROUP = LineTransport.GROUP
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # (Linux; named in fcntl since Python 3.10)


class _CountingWriter:
    """The pipe's ``StreamWriter``, counting the writes (each one a system call)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.transport = writer.transport
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()

    async def wait_closed(self) -> None:
        await self._writer.wait_closed()


async def _transport(
    wrap: type[_CountingWriter] = _CountingWriter,
) -> tuple[LineTransport, Any, int]:
    """A transport writing to a real pipe (of 1 MiB) through ``wrap``, and the pipe's reading end
    (non-blocking)."""
    peer_end, ours = os.pipe()
    fcntl.fcntl(ours, F_SETPIPE_SZ, 1 << 20)  # room for what the tests write
    unused_read, unused_write = os.pipe()
    os.set_blocking(peer_end, False)
    read_end = open(unused_read, "rb", buffering=0)  # noqa: SIM115 - the streams close it
    reader, writer = await pipe_streams(read_end, open(ours, "wb", buffering=0))  # noqa: SIM115 - as above
    os.close(unused_write)
    counting = wrap(writer)
    return LineTransport(reader, counting), counting, peer_end


def _readable(fd: int) -> bytes:
    """What the peer can read now, without waiting."""
    found = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return found
        if not chunk:
            return found
        found += chunk


def _run(loop: str, scenario: Callable[[], Awaitable[Any]]) -> Any:
    if loop == "uvloop":
        import uvloop

        return uvloop.run(asyncio.wait_for(scenario(), 10))
    return asyncio.run(asyncio.wait_for(scenario(), 10))


@pytest.mark.parametrize("loop", LOOPS)
def test_a_turns_messages_reach_the_peer_whole_and_in_order_in_groups(loop: str) -> None:
    messages = [f'{{"n":{n},"text":"{"é" * n}"}}'.encode() for n in range(3 * GROUP - 1)]

    async def scenario() -> None:
        transport, writer, peer = await _transport()
        transport.send_now(messages[0])
        assert _readable(peer) == messages[0] + b"\n"  # the first at once, before the turn ends
        held = b""
        for message in messages[1:]:
            transport.send_now(message)
            held += message + b"\n"
            held = held[len(read) :] if (read := _readable(peer)) else held
            assert held.count(b"\n") < GROUP  # never a whole group left waiting
        assert held  # the last, partial group waits for the turn's end...
        await asyncio.sleep(0)
        assert _readable(peer) == held  # ...and goes out with it
        assert writer.writes == 1 + (len(messages) - 1 + GROUP - 1) // GROUP  # one write per group
        transport.send_now(b'{"next":"turn"}')  # a new turn: at once again
        assert _readable(peer) == b'{"next":"turn"}\n'
        await transport.close()
        os.close(peer)

    _run(loop, scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_group_holds_at_most_its_bytes(loop: str) -> None:
    big = b'"' + b"x" * (LineTransport.GROUP_BYTES // 3) + b'"'

    async def scenario() -> None:
        transport, _, peer = await _transport()
        transport.send_now(b"1")
        _readable(peer)
        waiting = 0
        for _ in range(7):
            transport.send_now(big)
            waiting += len(big) + 1
            waiting -= len(_readable(peer))
            assert waiting < LineTransport.GROUP_BYTES + len(big) + 1
        await asyncio.sleep(0)
        assert len(_readable(peer)) == waiting
        await transport.close()
        os.close(peer)

    _run(loop, scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_write_that_waits_and_close_come_after_what_waits(loop: str) -> None:
    async def scenario() -> bytes:
        transport, _, peer = await _transport()
        transport.send_now(b"1")
        transport.send_now(b"2")  # waits in the group
        await transport.ready()  # a writer that must wait: the group is written first
        await transport.send(b"3")
        transport.send_now(b"4")
        transport.send_now(b"5")
        await transport.close()  # the group, then the end
        os.set_blocking(peer, True)
        written = b""
        while chunk := os.read(peer, 1 << 16):
            written += chunk
        os.close(peer)
        return written

    assert _run(loop, scenario) == b"1\n2\n3\n4\n5\n"


class _GoneWriter(_CountingWriter):
    """A writer (any object with a ``StreamWriter``'s methods will do) that raises once its peer is
    gone, as a closed socket's may."""

    gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            raise ConnectionResetError("the peer is gone")
        super().write(data)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_turn_that_ends_on_a_writer_whose_peer_is_gone_is_quiet(loop: str) -> None:
    """What waits in the group when the turn ends is dropped without an error reported to the loop:
    the connection learns that the peer is gone from its reading, and its next write raises."""

    async def scenario() -> list[dict[str, Any]]:
        reported: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context))
        transport, writer, peer = await _transport(_GoneWriter)
        transport.send_now(b"1")
        transport.send_now(b"2")  # waits in the group
        writer.gone = True
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        with pytest.raises(ConnectionResetError):
            await transport.send(b"3")
        os.close(peer)
        writer._writer.close()
        return reported

    assert _run(loop, scenario) == []
