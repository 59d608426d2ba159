"""Eager handler start where it is safe (issue 25, item 5).

Where the running Python has eager tasks (``asyncio.eager_task_factory``, 3.12+), a peer request's
handler starts at once, as its own task, when no notification read before it waits for its turn;
elsewhere (3.11, these machines and CI) it starts at the loop's next turn, as before. The decision
is tested with a recording factory in place of the Python's (it runs here); what eagerness changes
is tested with whatever the running Python has: the handler is its own task, its time-outs are its
own, a handler done before its task is returned frees its id, and a notification read before a
request is still handled first. The suite runs on 3.11; the same file was run under 3.12 for the
eager path (see docs/runtime.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acpgen.runtime.connection import in_flight
from acpgen.runtime.connection.connection import Connection
from tests.runtime.test_runtime import answering, ignore, pair, run

EAGER = getattr(asyncio, "eager_task_factory", None)


def test_the_eager_factory_is_the_running_pythons() -> None:
    assert in_flight.EAGER is EAGER  # feature-detected: None on 3.11


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods whose handlers the eager factory was asked to start (it starts them as the
    loop would: what is tested is when the runtime asks for it)."""
    asked: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coroutine: Any) -> asyncio.Task[Any]:
        asked.append(coroutine.cr_frame.f_locals["message"]["method"])
        return loop.create_task(coroutine)

    monkeypatch.setattr(in_flight, "EAGER", factory)
    return asked


def test_a_request_starts_eagerly_unless_a_notification_read_before_it_waits(recorded: list[str]) -> None:
    async def scenario() -> None:
        gate = asyncio.Event()
        handled: list[str] = []

        async def handle(message: dict[str, Any]) -> dict[str, Any] | None:
            handled.append(message["method"])
            if "id" not in message:
                await gate.wait()
                return None
            return {"jsonrpc": "2.0", "id": message["id"], "result": message["method"]}

        a, b = await pair(handle, ignore)
        assert await b.request("alone") == "alone"
        await b.notify("first")  # handled, waits at the gate
        await b.notify("second")  # waits for its turn
        while len(handled) < 2 or a._reader._queued < 1:  # "first" is being handled, "second" has been read
            await asyncio.sleep(0.01)
        behind = asyncio.ensure_future(b.request("behind"))
        while "behind" not in handled:
            await asyncio.sleep(0.01)
        gate.set()
        assert await behind == "behind"
        while len(handled) < 4:
            await asyncio.sleep(0.01)
        assert handled == ["alone", "first", "behind", "second"]
        assert recorded == ["alone"]  # "behind" was read while "second" waited: not eagerly
        await b.close()
        await a.close()

    run(scenario)


def test_a_loop_with_its_own_task_factory_keeps_it(recorded: list[str]) -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        made: list[asyncio.Task[Any]] = []

        def own(loop: asyncio.AbstractEventLoop, coroutine: Any, **options: Any) -> asyncio.Task[Any]:
            task = asyncio.Task(coroutine, loop=loop, **options)
            made.append(task)
            return task

        loop.set_task_factory(own)
        try:
            a, b = await pair(answering(lambda message: asyncio.sleep(0, "ok")), ignore)
            made.clear()
            assert await b.request("m") == "ok"
            assert recorded == [] and made  # the loop's factory started the handler
            await b.close()
            await a.close()
        finally:
            loop.set_task_factory(None)

    run(scenario)


def test_a_handler_is_its_own_task_and_its_time_outs_are_its_own() -> None:
    """With eager tasks the handler starts before the connection holds its task (proof that it
    started at once); without, after. Either way it runs as its own task, not the reading one, so
    a time-out inside it cancels only it and the connection reads on."""

    async def scenario() -> None:
        seen: list[tuple[bool, bool]] = []
        conn: list[Connection] = []

        async def handle(message: dict[str, Any]) -> dict[str, Any] | None:
            incoming = conn[0]._reader.running[message["id"]]
            started_at_once = not hasattr(incoming, "task")
            me = asyncio.current_task()
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.sleep(30)
            except TimeoutError:
                pass
            seen.append((started_at_once, me is incoming.task and me is not conn[0]._task))
            return {"jsonrpc": "2.0", "id": message["id"], "result": len(seen)}

        a, b = await pair(handle, ignore)
        conn.append(a)
        assert await b.request("m") == 1
        assert await b.request("m") == 2  # the connection still reads
        assert seen == [(EAGER is not None, True)] * 2
        await b.close()
        await a.close()

    run(scenario)


def test_a_handler_done_before_its_task_is_returned_frees_its_id() -> None:
    async def scenario() -> None:
        async def handle(message: dict[str, Any]) -> dict[str, Any] | None:  # never suspends
            return {"jsonrpc": "2.0", "id": message["id"], "result": message["params"]}

        a, b = await pair(handle, ignore)
        for n in range(3):
            assert await b.request("m", n) == n
        while a._reader.running:  # the last answer is written before its handler's task ends
            await asyncio.sleep(0.01)
        await b.close()
        await a.close()

    run(scenario)
