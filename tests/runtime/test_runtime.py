"""The runtime (acpgen.runtime), tested directly: order, bounds, lifecycle and conformance of the
connection, and the dispatcher's error mapping (issue 11). Real sockets and pipes, no mocks of
the code under test; bounds are checked on state (queue lengths, buffered bytes), never on time."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import socket
import sys
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from acpgen.runtime.connection.connection import Connection
from acpgen.runtime.connection.dispatch import Dispatcher
from acpgen.runtime.connection.limits import Limits
from acpgen.runtime.connection.lines import LineTransport, split_lines
from acpgen.runtime.connection.transport import Oversized
from acpgen.runtime.wire.codec import Unreadable, decode, encode, find_id, too_deep
from acpgen.runtime.wire.rpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, MethodSpec, RequestError, read_id

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
LIMIT = 10.0  # seconds before a test that hangs fails (a hang is a failure, never a pass)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(scenario(), LIMIT)

    asyncio.run(bounded())


async def pair(
    a: Handler, b: Handler, *, limits_a: Limits | None = None, limits_b: Limits | None = None
) -> tuple[Connection, Connection]:
    left, right = socket.socketpair()
    a_reader, a_writer = await asyncio.open_connection(sock=left)
    b_reader, b_writer = await asyncio.open_connection(sock=right)
    conn_a = Connection(LineTransport(a_reader, a_writer), a, limits=limits_a)
    conn_b = Connection(LineTransport(b_reader, b_writer), b, limits=limits_b)
    conn_a.start()
    conn_b.start()
    return conn_a, conn_b


def answering(results: Callable[[dict[str, Any]], Awaitable[Any]]) -> Handler:
    """A handler that answers requests with ``await results(message)`` and ignores notifications."""

    async def handle(message: dict[str, Any]) -> dict[str, Any] | None:
        if "id" not in message:
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "result": await results(message)}

    return handle


async def ignore(message: dict[str, Any]) -> None:
    return None


# -- order ---------------------------------------------------------------------------------------


def test_notifications_are_handled_one_at_a_time_in_arrival_order() -> None:
    seen: list[int] = []
    running = 0
    most = 0
    rng = random.Random(7)

    async def slow(message: dict[str, Any]) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(rng.random() / 1000)
        seen.append(message["params"]["n"])
        running -= 1

    async def scenario() -> None:
        a, b = await pair(slow, ignore)
        for n in range(300):
            await b.notify("note", {"n": n})
        await b.close()
        await a.run()  # end of input: what was received is still handled, then run() returns
        assert seen == list(range(300))
        assert most == 1

    run(scenario)


def test_an_answer_comes_after_every_notification_that_arrived_before_it() -> None:
    handled: list[int] = []
    rng = random.Random(11)

    async def client(message: dict[str, Any]) -> None:
        await asyncio.sleep(rng.random() / 500)
        handled.append(message["params"]["n"])

    async def scenario() -> None:
        agent: Connection

        async def prompt(message: dict[str, Any]) -> Any:
            for n in range(200):
                await agent.notify("session/update", {"n": n})
            return {"stopReason": "end_turn"}

        agent, to_agent = await pair(answering(prompt), client)
        for turn in range(3):
            handled.clear()
            assert await to_agent.request("session/prompt", {"turn": turn}) == {"stopReason": "end_turn"}
            assert handled == list(range(200)), f"turn {turn}: {len(handled)} of 200 updates handled at return"
        await to_agent.close()

    run(scenario)


def test_a_notification_handler_that_calls_the_peer_does_not_deadlock() -> None:
    order: list[str] = []

    async def scenario() -> None:
        agent: Connection
        client: Connection

        async def agent_side(message: dict[str, Any]) -> dict[str, Any] | None:
            if message["method"] == "ask":
                # notifications sent before the answer queue up behind the handler that asks
                for n in range(5):
                    await agent.notify("later", {"n": n})
                return {"jsonrpc": "2.0", "id": message["id"], "result": "answer"}
            await agent.notify("first", {})
            return {"jsonrpc": "2.0", "id": message["id"], "result": "done"}

        async def client_side(message: dict[str, Any]) -> None:
            if message["method"] == "first":
                order.append("first: asking")
                order.append("first: got " + await client.request("ask"))
            else:
                order.append(f"later {message['params']['n']}")

        agent, client = await pair(agent_side, client_side)
        assert await client.request("start") == "done"
        assert order == ["first: asking", "first: got answer", *(f"later {n}" for n in range(5))]
        await client.close()

    run(scenario)


def test_peer_requests_run_concurrently() -> None:
    async def scenario() -> None:
        both = asyncio.Barrier(2)

        async def meet(message: dict[str, Any]) -> Any:
            await both.wait()  # each request waits for the other: only concurrency lets them finish
            return message["params"]

        _, b = await pair(answering(meet), ignore)
        assert await asyncio.gather(b.request("m", 1), b.request("m", 2)) == [1, 2]
        await b.close()

    run(scenario)


# -- bounds --------------------------------------------------------------------------------------


async def _pipe_writer() -> tuple[asyncio.StreamWriter, int]:
    """A writer on a pipe that nobody reads, and the fd of the reading end (to close)."""
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb"))
    return asyncio.StreamWriter(transport, protocol, None, loop), read_fd


def test_senders_wait_while_the_peer_does_not_read_and_hold_no_encoded_bytes() -> None:
    """3000 concurrent 64 KiB notifications to a peer that never reads: the senders wait, and
    the process holds at most one encoded message beyond the transport's buffer (the payload
    string is shared; allocations are counted with tracemalloc, not timed)."""
    payload = "x" * (64 * 1024)
    high_water = 64 * 1024  # asyncio's default for pipes

    async def scenario() -> None:
        writer, read_fd = await _pipe_writer()
        conn = Connection(LineTransport(asyncio.StreamReader(), writer), ignore)
        sent = 0

        async def send_one() -> None:
            nonlocal sent
            await conn.notify("big", {"text": payload})
            sent += 1

        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tasks = [asyncio.create_task(send_one()) for _ in range(3000)]
            for _ in range(100):
                await asyncio.sleep(0.001)
            grown = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        buffered = writer.transport.get_write_buffer_size()
        assert sent < 10, f"{sent} messages of 64 KiB went out to a peer that reads nothing"
        assert buffered <= high_water + len(payload) + 1024, buffered  # one message beyond the mark, no more
        assert grown < 64 * 1024 * 1024, f"waiting senders hold {grown / 2**20:.0f} MiB"
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
        os.close(read_fd)
        await conn.close()

    run(scenario)


def test_at_most_max_running_requests_run_and_reading_pauses_beyond() -> None:
    release = asyncio.Event()
    started = 0

    async def blocked(message: dict[str, Any]) -> Any:
        nonlocal started
        started += 1
        await release.wait()
        return message["params"]

    async def scenario() -> None:
        _, b = await pair(answering(blocked), ignore, limits_a=Limits(max_running_requests=3))
        calls = [asyncio.create_task(b.request("m", n)) for n in range(10)]
        for _ in range(100):
            await asyncio.sleep(0.001)
        assert started == 3
        release.set()
        assert await asyncio.gather(*calls) == list(range(10))
        await b.close()

    run(scenario)


@pytest.mark.parametrize("asked_by", ["the handler", "a task it starts"])
def test_over_the_limit_while_handlers_await_the_peer_a_request_is_answered_busy(asked_by: str) -> None:
    release = asyncio.Event()

    async def scenario() -> None:
        a: Connection

        async def agent_side(message: dict[str, Any]) -> Any:  # each handler waits for the peer's answer
            if asked_by == "the handler":
                return await a.request("wait")
            return await asyncio.create_task(a.request("wait"))  # counts as the handler's

        async def hold(message: dict[str, Any]) -> Any:
            await release.wait()
            return "released"

        a, b = await pair(answering(agent_side), answering(hold), limits_a=Limits(max_running_requests=2))
        first = [asyncio.create_task(b.request("m")) for _ in range(2)]
        for _ in range(100):
            await asyncio.sleep(0.001)
        with pytest.raises(RequestError) as busy:
            # A must read on (the answers it awaits are behind) and refuse it
            await asyncio.wait_for(b.request("m"), 5)
        assert busy.value.code == INTERNAL_ERROR and busy.value.message == "Too busy"
        release.set()
        assert await asyncio.gather(*first) == ["released", "released"]
        await b.close()

    run(scenario)


def test_a_task_that_outlives_its_handler_gets_the_peer_answer_while_the_handlers_are_at_the_limit() -> None:
    """A handler starts a task and returns; the task asks the peer, and another handler (the one
    the limit allows) waits for what the task learns. The answer is behind the limit: reading
    must go on for it, or the agent hangs until the peer gives up."""

    async def scenario() -> None:
        a: Connection
        learned = asyncio.Event()
        background: set[asyncio.Task[None]] = set()

        async def ask_the_peer() -> None:
            await a.request("ask")
            learned.set()

        async def agent_side(message: dict[str, Any]) -> Any:
            if message["method"] == "start":
                task = asyncio.create_task(ask_the_peer())
                background.add(task)
                return "started"
            await learned.wait()
            return "learned"

        async def client_side(message: dict[str, Any]) -> Any:
            await asyncio.sleep(0.05)  # the waiting handler runs before the answer comes back
            return "answer"

        a, b = await pair(answering(agent_side), answering(client_side), limits_a=Limits(max_running_requests=1))
        assert await b.request("start") == "started"
        assert await asyncio.wait_for(b.request("wait"), 5) == "learned"
        await b.close()
        await a.close()

    run(scenario)


def test_a_connection_whose_loop_is_closed_while_it_stops_leaves_no_error_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reading task, cancelled and then dropped with its loop, is closed by the collector
    outside its own context: what its ``finally`` undoes must not raise there."""
    gc.collect()  # what earlier tests left is not this test's
    unraisable: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda failure: unraisable.append(failure.exc_value))

    async def started() -> tuple[Connection, socket.socket]:
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left)
        connection = Connection(LineTransport(reader, writer), ignore)
        connection.start()
        await asyncio.sleep(0.01)
        assert connection._task is not None
        connection._task.cancel()  # it stops: its finally waits for the tasks it cancelled
        await asyncio.sleep(0)
        return connection, right

    loop = asyncio.new_event_loop()
    connection, peer = loop.run_until_complete(started())
    loop.close()
    del connection
    gc.collect()
    peer.close()
    assert unraisable == []


def test_waiting_notifications_are_bounded_and_still_handled_in_order() -> None:
    release = asyncio.Event()
    seen: list[int] = []

    async def scenario() -> None:
        peak = 0

        async def slow(message: dict[str, Any]) -> None:
            await release.wait()
            seen.append(message["params"]["n"])

        a, b = await pair(slow, ignore, limits_a=Limits(max_queued_notifications=5))
        for n in range(50):
            await b.notify("note", {"n": n})
        for _ in range(100):
            await asyncio.sleep(0.001)
            peak = max(peak, a._reader._queued)
        assert peak <= 5
        release.set()
        await b.close()
        await a.run()
        assert seen == list(range(50))

    run(scenario)


def test_a_notification_handler_waiting_while_notifications_pile_up_gives_up() -> None:
    outcome: list[str] = []

    async def scenario() -> None:
        a: Connection
        b: Connection

        async def a_side(message: dict[str, Any]) -> None:
            if message["method"] == "start":
                try:
                    await a.request("never")
                except RequestError as error:
                    outcome.append(error.message)
            else:
                outcome.append(f"n{message['params']['n']}")

        async def b_side(message: dict[str, Any]) -> dict[str, Any] | None:
            for n in range(10):  # instead of answering, flood
                await b.notify("flood", {"n": n})
            await asyncio.Event().wait()
            return None

        a, b = await pair(a_side, b_side, limits_a=Limits(max_queued_notifications=2))
        await b.notify("start", {})
        for _ in range(300):
            await asyncio.sleep(0.001)
            if len(outcome) == 11:
                break
        assert outcome == ["No answer while the peer's notifications piled up", *(f"n{n}" for n in range(10))]
        await b.close()

    run(scenario)


# -- lifecycle -----------------------------------------------------------------------------------


def test_end_of_input_fails_pending_requests_cancels_handlers_and_run_returns() -> None:
    cancelled = asyncio.Event()

    async def stuck(message: dict[str, Any]) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def scenario() -> None:
        a, b = await pair(answering(stuck), answering(stuck))
        to_b = asyncio.create_task(a.request("question"))  # b never answers
        b_call = asyncio.create_task(b.request("stuck"))
        await asyncio.sleep(0.01)
        await b.close()
        await a.run()
        assert cancelled.is_set()
        with pytest.raises(ConnectionError):
            await to_b
        with pytest.raises(ConnectionError):
            await b_call
        with pytest.raises(ConnectionError):
            await a.request("after the end")

    run(scenario)


def test_close_is_idempotent_and_the_context_manager_starts_and_closes() -> None:
    async def scenario() -> None:
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left)
        peer_reader, peer_writer = await asyncio.open_connection(sock=right)
        peer = Connection(LineTransport(peer_reader, peer_writer), answering(lambda m: asyncio.sleep(0, "pong")))
        peer.start()
        async with Connection(LineTransport(reader, writer), ignore) as conn:
            assert await conn.request("ping") == "pong"
        await conn.close()
        await conn.close()
        with pytest.raises(ConnectionError):
            await conn.request("ping")
        await peer.run()  # our side closed: the peer's input ends

    run(scenario)


def test_no_handler_failure_ends_the_connection() -> None:
    seen: list[int] = []

    async def flaky(message: dict[str, Any]) -> dict[str, Any] | None:
        if "id" not in message:
            seen.append(message["params"]["n"])
            if message["params"]["n"] % 2:
                raise RuntimeError("notification handler failed")
            return None
        if message["params"] == "raise":
            raise RuntimeError("request handler failed")
        if message["params"] == "none":
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"bad": float("nan")}}

    async def scenario() -> None:
        _, b = await pair(flaky, ignore)
        for n in range(4):
            await b.notify("n", {"n": n})
        for params in ("raise", "none", "nan"):
            with pytest.raises(RequestError) as caught:
                await b.request("m", params)
            assert caught.value.code == INTERNAL_ERROR and caught.value.data is None
        with pytest.raises(ValueError):
            await b.request("m", {"x": float("inf")})  # we never write what is not JSON either
        assert seen == [0, 1, 2, 3]
        await b.close()

    run(scenario)


# -- reading -------------------------------------------------------------------------------------


class _Chunks:
    """A stream reader that hands out given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def read(self, limit: int = -1) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


READERS = ("split_lines", "LineTransport")
"""The two ways lines are read: the splitter's async iterator (the remote client's event
streams) and the stdio transport's ``receive``, one line per call."""


def _lines(chunks: list[bytes], limit: int, way: str = "split_lines") -> list[bytes | str]:
    def shown(line: bytes | Oversized) -> bytes | str:
        return f"oversized:{line.head[:12]!r}" if isinstance(line, Oversized) else line

    async def collect() -> list[bytes | str]:
        if way == "split_lines":
            return [shown(line) async for line in split_lines(_Chunks(chunks), limit)]
        transport, got = LineTransport(_Chunks(chunks), None), []
        while (line := await transport.receive(limit)) is not None:
            got.append(shown(line))
        assert await transport.receive(limit) is None  # the end stays the end
        return got

    return asyncio.run(collect())


@pytest.mark.parametrize("way", READERS)
def test_lines_split_correctly_at_every_chunk_boundary(way: str) -> None:
    rng = random.Random(3)
    lines = [bytes(rng.choice(b'ab{}[]" ') for _ in range(rng.randrange(0, 300))) for _ in range(60)]
    data = b"\n".join(lines) + b"\n"
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(data)), 40))
        chunks = [data[i:j] for i, j in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert _lines(chunks, 10_000, way) == lines


@pytest.mark.parametrize("way", READERS)
def test_an_over_long_line_is_skipped_and_reported_with_its_head(way: str) -> None:
    big = b'{"id": 5, "x": "' + b"y" * 5000 + b'"}'
    got = _lines([b'{"a": 1}\n', big[:3000], big[3000:] + b"\n", b'{"b": 2}\n', b"z" * 2000], 1000, way)
    assert got == [b'{"a": 1}', 'oversized:b\'{"id": 5, "x\'', b'{"b": 2}', "oversized:b'zzzzzzzzzzzz'"]


def test_both_readers_agree_on_long_and_short_lines_at_any_chunk_boundary() -> None:
    rng = random.Random(7)
    lines = [bytes(rng.choice(b"ab ") for _ in range(rng.choice((0, 5, 99, 100, 101, 400)))) for _ in range(80)]
    data = b"\n".join(lines) + rng.choice((b"\n", b"", b"tail", b"x" * 150))
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randrange(1, 60)))
        chunks = [data[i:j] for i, j in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert _lines(chunks, 100, "LineTransport") == _lines(chunks, 100, "split_lines")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": [[[', 7),
        (b'{"params": {"id": 3}, "id": "top"', "top"),
        (b'{"params": ["id", {"id": 1}], "method": "x"}', None),
        (b'{"x": "\\"id\\": 4", "id": null}', None),
        (b'{"id": true}', None),
        (b'{"id": 1.0}', 1),
        (b'[{"id": 1}]', None),
        (b'{"id"', None),
    ],
)
def test_find_id_reads_only_the_top_level_id(text: bytes, found: object) -> None:
    assert find_id(text) == found


def test_too_deep_counts_only_brackets_outside_strings() -> None:
    assert not too_deep(b"[" * 10 + b"]" * 10, 10)
    assert too_deep(b"[" * 11 + b"]" * 11, 10)
    assert not too_deep(b'["' + b"[" * 100 + b'"]', 10)
    assert too_deep(b'{"a": "\\"", "b": ' + b"{" * 20, 10)


def test_request_ids_read_as_the_wire_reads_them() -> None:
    assert read_id("1") == (True, "1") and read_id(None) == (True, None) and read_id(2.0) == (True, 2)
    for bad in (True, False, 1.5, 2**63, -(2**63) - 1, [], {}, float("nan")):
        assert read_id(bad) == (False, None), bad


# -- dispatcher ----------------------------------------------------------------------------------


class Params(BaseModel):
    model_config = ConfigDict(strict=True, validate_by_alias=True, validate_by_name=True)
    name: str


class Result(BaseModel):
    model_config = ConfigDict(strict=True, validate_by_alias=True, validate_by_name=True)
    greeting: str


SPECS = (
    MethodSpec("greet", "greet", "agent", "request", Params, Result, True, None),
    MethodSpec("note", "note", "agent", "notification", Params, None, True, None),
)


class Greeter:
    def __init__(self) -> None:
        self.notes: list[str] = []

    async def greet(self, params: Params) -> Any:
        if params.name == "dict":
            return {"greeting": "from a dict"}
        if params.name == "wrong":
            return Params(name="not a result")
        return Result(greeting=f"hello {params.name}")

    async def note(self, params: Params) -> None:
        self.notes.append(params.name)


def dispatch(message: dict[str, Any], handler: object | None = None) -> Any:
    """The dispatcher's response as the peer reads it (results are JSON bytes already)."""
    response = asyncio.run(Dispatcher(handler or Greeter(), SPECS).dispatch(message))
    return None if response is None else json.loads(encode(response))


def test_dispatcher_answers_results_by_alias_and_reads_dicts_as_the_result_model() -> None:
    assert dispatch({"id": 1, "method": "greet", "params": {"name": "ada"}})["result"] == {"greeting": "hello ada"}
    assert dispatch({"id": 2, "method": "greet", "params": {"name": "dict"}})["result"] == {"greeting": "from a dict"}


def test_dispatcher_maps_failures_to_their_codes_without_leaking_input() -> None:
    wrong = dispatch({"id": 3, "method": "greet", "params": {"name": "wrong"}})
    assert wrong["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
    invalid = dispatch({"id": 4, "method": "greet", "params": {"name": "x" * 10_000, "extra": 1, "n": None}})
    invalid = dispatch({"id": 4, "method": "greet", "params": {"name": 5}})
    assert invalid["error"]["code"] == INVALID_PARAMS
    assert [e["loc"] for e in invalid["error"]["data"]] == [["name"]] and "input" not in invalid["error"]["data"][0]
    assert dispatch({"id": 5, "method": "_x/y", "params": {}})["error"]["code"] == METHOD_NOT_FOUND  # no hook
    assert dispatch({"id": 6, "method": "nope", "params": {}})["error"]["code"] == METHOD_NOT_FOUND


def test_dispatcher_never_answers_notifications() -> None:
    greeter = Greeter()
    assert dispatch({"method": "note", "params": {"name": "a"}}, greeter) is None
    assert dispatch({"method": "note", "params": {"name": 1}}, greeter) is None
    assert dispatch({"method": "_x/y"}, greeter) is None
    assert greeter.notes == ["a"]


def test_limits_refuse_values_that_would_stall_reading() -> None:
    with pytest.raises(ValueError, match="max_queued_notifications"):
        Limits(max_queued_notifications=0)


def test_a_spawned_peer_that_ignores_the_end_of_its_input_is_terminated() -> None:
    from acpgen.runtime.connection import process as _process

    async def scenario() -> None:
        process, _, writer = await _process.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
        writer.close()
        assert await _process.stop(process, grace=0.2) != 0  # terminated, not waited for a minute

    run(scenario)


def test_spawn_wants_an_argument_list() -> None:
    from acpgen.runtime.connection import process as _process

    with pytest.raises(ValueError, match="list of arguments"):
        asyncio.run(_process.spawn("my-agent --stdio"))  # type: ignore[arg-type]


def test_models_are_written_in_one_pass_and_spliced_into_the_envelope() -> None:
    from acpgen.runtime.wire.rpc import Deferred

    answer = asyncio.run(Dispatcher(Greeter(), SPECS).dispatch({"id": 7, "method": "greet", "params": {"name": "é"}}))
    assert type(answer["result"]) is Deferred  # written when the connection sends the answer
    assert type(answer["result"].encode()) is bytes  # by pydantic-core, JSON text; no dict in between
    assert encode(answer) == '{"jsonrpc":"2.0","id":7,"result":{"greeting":"hello é"}}'.encode()
    lone = asyncio.run(
        Dispatcher(Greeter(), SPECS).dispatch({"id": 8, "method": "greet", "params": {"name": "\ud800"}})
    )
    assert encode(lone) == b'{"jsonrpc":"2.0","id":8,"result":{"greeting":"hello \\ud800"}}'  # escaped, never lost


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id": 1, "x": "\\u00e9"}', {"id": 1, "x": "é"}),
        (b'{"x": "\\ud800"}', {"x": "\ud800"}),  # the fast reader refuses a lone surrogate; the slow one reads it
        (b'{"id": 3, "x": ' + b"[" * 300 + b"]" * 300 + b"}", "depth 300"),  # past the fast reader's limit
        (b'{"id": 4, "x": ' + b"[" * 600 + b"]" * 600 + b"}", (4, -32600)),
        (b"[" * 100_000, (None, -32600)),
        (b'{"x": NaN}', (None, -32700)),
        (b'{"x": 1', (None, -32700)),
        (b"\xff\xfe", (None, -32700)),
    ],
)
def test_decode_reads_fast_and_refuses_exactly(line: bytes, expected: object) -> None:
    got = decode(line, 512)
    if isinstance(expected, tuple):
        assert type(got) is Unreadable and (got.request_id, got.error.code) == expected
    elif expected == "depth 300":
        assert type(got) is dict and got["id"] == 3
    else:
        assert got == expected
